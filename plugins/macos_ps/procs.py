"""Process reads for macos_ps through psutil, with os.getpgid/os.getsid for the two ids psutil lacks.

psutil's AccessDenied becomes PermissionError here, at one place, so the verdicts branch on our
own terms: a refused read means "cannot tell", a missing process means "not in view".
/bin/ps is never needed: every fact the plugin reads has a system call or a psutil reader on
macOS and Linux alike.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache

import psutil

from agent_tty_plugins.macos_ps.facts import same_start

LINUX = sys.platform.startswith("linux")
DEAD_STATES = frozenset({psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD})


@dataclass(frozen=True, slots=True)
class Proc:
    pid: int
    pgid: int | None
    """None for a zombie whose ids the kernel no longer gives (macOS)."""
    sid: int | None
    live: bool
    """False for a zombie: it has ended and waits to be reaped."""
    start: float | None
    uid: int | None
    """The real uid: who started the process (a setuid exec keeps it; kill(2) checks it)."""


@dataclass(frozen=True, slots=True)
class Scan:
    members: list[Proc] = field(default_factory=list)
    refused: bool = False
    """A read was refused: a process may be missing from `members`."""


@contextmanager
def _refusal_as_permission_error() -> Iterator[None]:
    try:
        yield
    except psutil.AccessDenied as err:
        raise PermissionError(f"psutil refused a read of pid {err.pid}") from None


def _start(proc: psutil.Process) -> tuple[float, str]:
    """The start time and the clock it is on. psutil >= 7 shifts create_time() by the clock steps
    it saw since its own import, so a long-lived host would read its program's start time
    differently after a step; the unshifted value (macOS: the kernel's p_starttime; Linux: ticks
    since boot) is fixed at fork. Older psutil has only create_time(): unshifted on macOS, boot
    time plus ticks on Linux."""
    impl = getattr(proc, "_proc", None)
    try:
        raw = impl.create_time(monotonic=True)  # type: ignore[union-attr]
    except (AttributeError, TypeError):
        return proc.create_time(), "epoch"
    return float(raw), ("boot" if LINUX else "epoch")


@cache
def clock() -> str:
    """The clock this psutil reads start times on: a record on another clock cannot be compared."""
    return _start(psutil.Process())[1]


def now() -> float:
    """This moment on `clock()`, as a process forked now would read its start time, or earlier:
    Linux counts start times from boot on CLOCK_BOOTTIME (truncated to ticks, so a process
    forked before this read never reads later than it); macOS stamps them with the wall clock."""
    if LINUX:
        since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
        return since_boot if clock() == "boot" else psutil.boot_time() + since_boot
    return time.time()


def boot_id() -> str | None:
    """Linux's id of this boot: a start time counted from boot is compared within one boot only."""
    if not LINUX:
        return None
    try:
        with open("/proc/sys/kernel/random/boot_id") as handle:
            return handle.read().strip() or None
    except OSError:
        return None


def _ids(pid: int) -> tuple[int | None, int | None]:
    try:
        return os.getpgid(pid), os.getsid(pid)
    except ProcessLookupError:
        return None, None


def parent(pid: int) -> int | None:
    """The parent's pid of the process at `pid`; None when none is in view or the read is refused."""
    try:
        with _refusal_as_permission_error():
            return psutil.Process(pid).ppid()
    except (psutil.NoSuchProcess, PermissionError):
        return None


def read(pid: int) -> Proc | None:
    """The process at `pid`, or None when none is in view. PermissionError: the read was refused."""
    if pid <= 0:
        return None
    with _refusal_as_permission_error():
        try:
            proc = psutil.Process(pid)
        except psutil.NoSuchProcess:  # ZombieProcess included: no start time to compare
            return None
        try:
            start: float | None = _start(proc)[0]
        except psutil.ZombieProcess:
            start = None
        except psutil.NoSuchProcess:
            return None
        pgid, sid = _ids(pid)
        try:
            live = proc.status() not in DEAD_STATES
            uid: int | None = proc.uids().real
        except psutil.ZombieProcess:
            live, uid = False, None
        except psutil.NoSuchProcess:
            return None
        # The ids and the state were read after the start time: a process that took the pid
        # in between has another start time, and the reads are discarded.
        if live and (pgid is None or not proc.is_running()):
            return None
    return Proc(pid, pgid, sid, live, start, uid)


def scan_group(pgid: int) -> Scan:
    """Every process in view whose process group is `pgid`, zombies included."""
    members: list[Proc] = []
    refused = False
    for pid in psutil.pids():
        try:
            if os.getpgid(pid) != pgid:
                continue
        except ProcessLookupError:
            continue
        except PermissionError:
            refused = True
            continue
        try:
            proc = read(pid)
        except PermissionError:
            refused = True
            continue
        if proc is not None:
            members.append(proc)
    return Scan(members, refused)


def start_time(pid: int) -> tuple[float, str] | None:
    """The start time and its clock, or None when no such process is in view."""
    with _refusal_as_permission_error():
        try:
            return _start(psutil.Process(pid))
        except psutil.NoSuchProcess:
            return None


def terminal(pid: int) -> str | None:
    """The controlling terminal's path, None without one. ProcessLookupError: no such process."""
    with _refusal_as_permission_error():
        try:
            return psutil.Process(pid).terminal()
        except psutil.NoSuchProcess:
            raise ProcessLookupError(pid) from None


def cmdline(pid: int) -> list[str] | None:
    """The command line, or None when the process ended or is a zombie (macOS keeps no
    arguments for one). PermissionError: another user's process, on macOS."""
    with _refusal_as_permission_error():
        try:
            return psutil.Process(pid).cmdline()
        except psutil.NoSuchProcess:
            return None


def is_running(pid: int, start: float) -> bool:
    """The process at `pid` still has this start time (it was not replaced)."""
    try:
        current = start_time(pid)
    except PermissionError:
        return False
    return current is not None and same_start(current[0], start)
