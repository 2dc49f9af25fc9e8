"""How a manifest is shown by list (and the API's list)."""

from __future__ import annotations

from agent_tty.storage.records import Manifest

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command ~2 ms at start-up (issue 26)
    from typing import Any


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
