"""The host's identity for macos_ps: its start time and the command line that names its session.

DEAD only on proof (ProvesHostPid, R2): no process has the pid, a zombie has it, or a process
with another start time took it. A process with the recorded start time that is not ours, or
whose command line we cannot read or that names no agent-tty host of this session, reads
UNKNOWN: no kill (R19) and no "failed" record (R2).
"""

from __future__ import annotations

import os
import signal as signals
from typing import Any

from agent_tty.platform.types import HostVerdict
from agent_tty_plugins.macos_ps import procs
from agent_tty_plugins.macos_ps.facts import host_session, same_start, start_of


def capture(pid: int) -> dict[str, Any] | None:
    try:
        proc = procs.read(pid)
        argv = procs.cmdline(pid)
    except PermissionError:
        return None
    if proc is None or proc.start is None:
        return None
    return {"startTime": proc.start, "clock": procs.clock(), "sessionId": host_session(argv or [])}


def _probe_only(pid: int) -> HostVerdict:
    """No record to compare: only "no such process" (or a zombie) is proof of death."""
    if pid <= 0:
        return HostVerdict.DEAD
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return HostVerdict.DEAD
    except PermissionError:
        return HostVerdict.UNKNOWN
    try:
        proc = procs.read(pid)
    except PermissionError:
        return HostVerdict.UNKNOWN
    if proc is not None and not proc.live:
        return HostVerdict.DEAD
    return HostVerdict.UNKNOWN


def judge(pid: int, identity: dict[str, Any] | None) -> HostVerdict:
    if identity is None:
        return _probe_only(pid)
    start = start_of(identity, procs.clock())
    if start is None:
        return HostVerdict.UNKNOWN  # a record we cannot compare proves nothing (R2)
    try:
        proc = procs.read(pid)
    except PermissionError:
        return HostVerdict.UNKNOWN
    if proc is None or not proc.live:
        return HostVerdict.DEAD
    if proc.start is None:
        return HostVerdict.UNKNOWN
    if not same_start(proc.start, start):
        return HostVerdict.DEAD  # another process took the pid (R19)
    if proc.uid != os.geteuid():
        # Our host runs as us: another user's process that matches a world-readable identity
        # is no proof of our host (unknown: no kill, no "failed").
        return HostVerdict.UNKNOWN
    session = identity.get("sessionId")
    if session is not None:
        try:
            argv = procs.cmdline(pid)
        except PermissionError:
            return HostVerdict.UNKNOWN
        if argv is None or host_session(argv) != session:
            return HostVerdict.UNKNOWN
    return HostVerdict.ALIVE


def kill(pid: int, identity: dict[str, Any]) -> HostVerdict:
    """SIGKILL only a host the identity proves alive, right after the proof (R19)."""
    verdict = judge(pid, identity)
    if verdict is HostVerdict.ALIVE:
        try:
            os.kill(pid, signals.SIGKILL)
        except ProcessLookupError:
            return HostVerdict.DEAD
    return verdict
