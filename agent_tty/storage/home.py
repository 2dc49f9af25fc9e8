"""Where a Home and its sessions live, and which session ids are valid."""

from __future__ import annotations

import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from agent_tty.protocol.errors import AgentTtyError, ErrorCode, invalid

HOME_ENV = "AGENT_TTY_HOME"
SESSION_ID_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
_ID_LENGTH = 12  # 62 bits: collisions across Homes sharing a socket directory stay negligible

MANIFEST = "session.json"
HOST = "host.json"
PROGRAM = "program.json"
EVENTS = "events.jsonl"
DESTROYED_MARKER = "destroyed"
CREATE_FAILED_MARKER = "create-failed"


def resolve_home(option: str | None = None) -> Path:
    raw = option or os.environ.get(HOME_ENV) or os.path.join(os.path.expanduser("~"), ".agent-tty")
    return Path(os.path.abspath(raw))


def new_session_id() -> str:
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(_ID_LENGTH))


def validate_session_id(value: str) -> str:
    """A session id is a name, never a path: `../x`, `/etc` and '' are refused (exit 2)."""
    if not isinstance(value, str) or not SESSION_ID_RE.fullmatch(value):
        raise invalid(
            f"invalid session id {value!r}: expected 1-64 of a-z, 0-9, '-', '_' (starting with a letter or digit)",
            sessionId=value,
        )
    return value


@dataclass(frozen=True)
class SessionPaths:
    session_id: str
    folder: Path

    @property
    def manifest(self) -> Path:
        return self.folder / MANIFEST

    @property
    def host(self) -> Path:
        return self.folder / HOST

    @property
    def program(self) -> Path:
        return self.folder / PROGRAM

    @property
    def events(self) -> Path:
        return self.folder / EVENTS

    @property
    def destroyed_marker(self) -> Path:
        return self.folder / DESTROYED_MARKER

    @property
    def create_failed_marker(self) -> Path:
        return self.folder / CREATE_FAILED_MARKER

    @property
    def artifacts(self) -> Path:
        return self.folder / "artifacts"


@dataclass(frozen=True)
class Home:
    root: Path

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    def session(self, session_id: str) -> SessionPaths:
        return SessionPaths(validate_session_id(session_id), self.sessions / session_id)

    def session_ids(self) -> list[str]:
        """Ids of the session folders; names that are not valid ids are not sessions."""
        try:
            names = os.listdir(self.sessions)
        except FileNotFoundError:
            return []
        except OSError as err:
            raise AgentTtyError(
                ErrorCode.STORAGE_ERROR, f"cannot list {self.sessions}: {err.strerror}", path=str(self.sessions)
            ) from None
        return sorted(n for n in names if SESSION_ID_RE.fullmatch(n))

    def ensure(self) -> None:
        """Create the Home (0700). Only `create` calls this: no other write creates a folder."""
        for folder in (self.root, self.sessions):
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                pass
            except OSError as err:
                raise AgentTtyError(
                    ErrorCode.STORAGE_ERROR, f"cannot create {folder}: {err.strerror}", path=str(folder)
                ) from None


def socket_dir() -> Path:
    """A short per-user folder for sockets, so every path fits sun_path (108 bytes)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "agent-tty" if runtime and os.path.isdir(runtime) else Path(f"/tmp/agent-tty-{os.getuid()}")
    return base


def ensure_socket_dir() -> Path:
    folder = socket_dir()
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(folder)
    # A folder in /tmp that someone else made, or a link, would let them take our sockets.
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise AgentTtyError(
            ErrorCode.STORAGE_ERROR,
            f"socket folder {folder} is not a private folder of this user",
            path=str(folder),
        )
    return folder


def socket_path_for(session_id: str) -> str:
    return str(socket_dir() / f"{session_id}.sock")
