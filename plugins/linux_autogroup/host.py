"""The host's identity: its boot id, start time and pid namespace (host.json), and the judgement
and kill of a host by it (ProvesHostPid)."""

from __future__ import annotations

import os
import signal as signals

from agent_tty.platform.types import HostVerdict
from agent_tty_plugins._posix import procfs
from agent_tty_plugins.linux_autogroup.proof import run_by_us

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command that judges a host ~2 ms
    from typing import Any


def capture(pid: int) -> dict[str, Any] | None:
    try:
        stat = procfs.read_stat(pid)
    except PermissionError:
        return None
    boot = procfs.boot_id()
    if stat is None or boot is None:
        return None
    return {"bootId": boot, "startTime": stat.start_time, "pidNamespace": procfs.pid_namespace(pid)}


def judge(pid: int, identity: dict[str, Any] | None) -> HostVerdict:
    if identity is None:
        # No record to compare: only "no such process" is proof of death.
        if pid <= 0:
            return HostVerdict.DEAD
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return HostVerdict.DEAD
        except PermissionError:
            return HostVerdict.UNKNOWN
        try:
            stat = procfs.read_stat(pid)
        except PermissionError:
            return HostVerdict.UNKNOWN
        if stat is not None and not procfs.is_live_state(stat.state):
            return HostVerdict.DEAD
        return HostVerdict.UNKNOWN
    if not procfs.proc_shows_own_pid_space():
        return HostVerdict.UNKNOWN
    boot = procfs.boot_id()
    recorded_boot = identity.get("bootId")
    if boot is None or not isinstance(recorded_boot, str) or not isinstance(identity.get("startTime"), int):
        return HostVerdict.UNKNOWN  # a record we cannot compare proves nothing (R2)
    if recorded_boot != boot:
        return HostVerdict.DEAD
    recorded_ns = identity.get("pidNamespace")
    if recorded_ns is not None and recorded_ns != procfs.pid_namespace():
        return HostVerdict.UNKNOWN
    try:
        stat = procfs.read_stat(pid)
    except PermissionError:
        return HostVerdict.UNKNOWN
    if stat is None or not procfs.is_live_state(stat.state):
        return HostVerdict.DEAD
    if stat.start_time != identity.get("startTime"):
        return HostVerdict.DEAD  # another process took the pid (R19)
    if not run_by_us(pid):
        # Our host runs as us: another user's process that matches a (world-readable) identity
        # is no proof of our host. Unknown, not dead: "dead" would let a reconcile record the
        # session failed (R2) and destroy --force go on, while unknown kills nothing and writes
        # nothing (kill_host kills only an alive host).
        return HostVerdict.UNKNOWN
    return HostVerdict.ALIVE


def kill(pid: int, identity: dict[str, Any]) -> HostVerdict:
    verdict = judge(pid, identity)
    if verdict is HostVerdict.ALIVE:
        try:
            os.kill(pid, signals.SIGKILL)
        except ProcessLookupError:
            return HostVerdict.DEAD
    return verdict
