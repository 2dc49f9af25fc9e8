"""The host's identity on Windows: its pid and creation time, read and acted on through one
process handle (which pins the pid: no other process can take it while the handle is open).

DEAD only on proof (R2): no process has the pid, the one that has it ended, or it has another
creation time. A process with the recorded creation time that is not our user's, or whose
command line names no agent-tty host of the recorded session, reads UNKNOWN (no kill, R19).
"""

from __future__ import annotations

from typing import Any

from agent_tty.platform.types import HostVerdict
from agent_tty_plugins.windows_conpty import layer

HOST_KILL_EXIT = 137


def _session_of(argv: list[str]) -> str | None:
    """`python -m agent_tty.host SESSION CREATOR HOME`: the session the host serves."""
    for index, part in enumerate(argv[:-1]):
        if part == "agent_tty.host":
            return argv[index + 1]
    return None


def capture(pid: int) -> dict[str, Any] | None:
    win = layer.current()
    process = win.open_process(pid)
    if process is None:
        return None
    try:
        created = win.process_created(process)
    finally:
        win.close_handle(process)
    argv = win.process_command_line(pid)
    return {"created": created, "sessionId": _session_of(argv or [])}


def _judge(win: layer.Win32, process: int, pid: int, identity: dict[str, Any] | None) -> HostVerdict:
    if win.process_exited(process):
        return HostVerdict.DEAD
    if identity is None or not isinstance(identity.get("created"), int):
        return HostVerdict.UNKNOWN  # nothing to compare: only an ended process is proof
    if win.process_created(process) != identity["created"]:
        return HostVerdict.DEAD  # another process took the pid
    if win.process_user_sid(process) != win.user_sid():
        return HostVerdict.UNKNOWN
    session = identity.get("sessionId")
    if session is not None and _session_of(win.process_command_line(pid) or []) != session:
        return HostVerdict.UNKNOWN
    return HostVerdict.ALIVE


def judge(pid: int, identity: dict[str, Any] | None) -> HostVerdict:
    win = layer.current()
    process = win.open_process(pid)
    if process is None:
        return HostVerdict.DEAD
    try:
        return _judge(win, process, pid, identity)
    finally:
        win.close_handle(process)


def kill(pid: int, identity: dict[str, Any]) -> HostVerdict:
    """TerminateProcess through the handle the proof was read with (R19)."""
    win = layer.current()
    process = win.open_process(pid)
    if process is None:
        return HostVerdict.DEAD
    try:
        verdict = _judge(win, process, pid, identity)
        if verdict is HostVerdict.ALIVE:
            win.terminate_process(process, HOST_KILL_EXIT)
        return verdict
    finally:
        win.close_handle(process)
