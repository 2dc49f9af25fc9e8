"""How a manifest is shown by list and inspect."""

from __future__ import annotations

import time
from typing import Any

from agent_tty.storage.records import Manifest


def summary(manifest: Manifest) -> dict[str, Any]:
    return {
        "sessionId": manifest.session_id,
        "name": manifest.name,
        "status": manifest.status.value,
        "argv": list(manifest.argv),
        "hostPid": manifest.host_pid,
        "childPid": manifest.child_pid,
        "cols": manifest.cols,
        "rows": manifest.rows,
        "mechanism": manifest.mechanism,
        "createdAt": manifest.created_at,
        "endedAt": manifest.ended_at,
        "exitCode": manifest.exit_code,
        "exitSignal": manifest.exit_signal,
        "failure": manifest.failure.to_obj() if manifest.failure else None,
    }


def age_text(created_at: float) -> str:
    seconds = max(0, int(time.time() - created_at))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
