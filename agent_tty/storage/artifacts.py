"""A session's artifacts/ folder: created inside an existing session folder, never the folder itself."""

from __future__ import annotations

import hashlib
from pathlib import Path

from agent_tty.platform.system import current
from agent_tty.protocol.errors import AgentTtyError, ErrorCode, not_found
from agent_tty.storage.files import FolderGone, write_atomic
from agent_tty.storage.home import SessionPaths


def ensure_artifacts(paths: SessionPaths) -> Path:
    try:
        current().mkdir_private(str(paths.artifacts))
    except FileExistsError:
        pass
    except FileNotFoundError:
        raise not_found(paths.session_id) from None  # gc removed the session meanwhile
    except OSError as err:
        raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"cannot create {paths.artifacts}: {err.strerror}") from None
    return paths.artifacts


def save(path: Path, data: bytes, session_id: str) -> dict[str, object]:
    """Write an artifact atomically (no folder is created) and describe it."""
    try:
        write_atomic(path, data)
    except FolderGone:
        raise not_found(session_id) from None
    except AgentTtyError as err:
        raise AgentTtyError(ErrorCode.EXPORT_FAILED, err.message, path=str(path)) from None
    return {"path": str(path), "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
