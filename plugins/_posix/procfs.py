"""Reads of Linux /proc: process stat lines, real uids, autogroups, boot id, pid namespace."""

from __future__ import annotations

import os

from agent_tty.frozen import Frozen


class ProcStat(Frozen):
    __slots__ = ("pid", "state", "ppid", "pgrp", "session", "start_time")
    pid: int
    state: str
    ppid: int
    pgrp: int
    session: int
    start_time: int
    """Clock ticks after boot (os.sysconf("SC_CLK_TCK") a second, 100 on Linux: 10 ms each):
    one value per pid per boot, so it tells a reused pid apart."""


def parse_stat(text: str) -> ProcStat:
    # comm (field 2) may hold spaces and parentheses: split after its last ')'.
    head, _, rest = text.rpartition(")")
    pid = int(head.split(" (", 1)[0])
    fields = rest.split()
    return ProcStat(
        pid=pid,
        state=fields[0],
        ppid=int(fields[1]),
        pgrp=int(fields[2]),
        session=int(fields[3]),
        start_time=int(fields[19]),
    )


def read_stat(pid: int | str) -> ProcStat | None:
    """The process's stat, or None when no such process is in view (ENOENT, ESRCH: it never
    ran, ended, or hidepid=2 hides it; or its stat line does not parse).

    Every other OSError passes through, because None reads "gone" and a failed read proves
    nothing: PermissionError (EACCES: /proc refused to show it, hidepid=1 or a security module),
    and errors a retry may change, such as EMFILE/ENFILE (no fd left) or EINTR. A zombie is in
    view: its state is "Z" (see is_live_state)."""
    try:
        text = _read(f"/proc/{pid}/stat").decode("utf-8", "surrogateescape")
    except (FileNotFoundError, ProcessLookupError):
        return None
    try:
        return parse_stat(text)
    except (ValueError, IndexError):
        return None


def parse_real_uid(text: str) -> int | None:
    # "Uid:\t1000\t1000\t1000\t1000": real, effective, saved, filesystem
    for line in text.splitlines():
        if line.startswith("Uid:"):
            try:
                return int(line.split()[1])
            except (IndexError, ValueError):
                return None
    return None


def read_real_uid(pid: int | str) -> int | None:
    """The process's real uid, from /proc/PID/status; None when no such process is in view.

    PermissionError passes through. The real uid, not /proc/PID's owner: that owner is the
    effective uid, and root for a process that made itself non-dumpable (a setuid program,
    prctl(PR_SET_DUMPABLE, 0)), so a program of ours would read as root's. The real uid names
    who started the process (a setuid exec keeps it), which is what kill(2) checks as well."""
    try:
        text = _read(f"/proc/{pid}/status").decode("utf-8", "surrogateescape")
    except (FileNotFoundError, ProcessLookupError):
        return None
    return parse_real_uid(text)


def _read(path: str) -> bytes:
    """A /proc file's whole text, straight from the fd: a file object costs a read of a host's
    stat or status ~5-13 us, ~2 ms of a list of 100 sessions (issue 26). stat and status are made
    whole at the first read, so a read shorter than asked is the end (no second read for EOF)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while True:
            chunk = os.read(fd, PROC_READ)
            chunks.append(chunk)
            if len(chunk) < PROC_READ:
                return b"".join(chunks)
    finally:
        os.close(fd)


PROC_READ = 16384


def is_live_state(state: str) -> bool:
    """Every state but zombie (Z) and dead (X, x) is live: R, S, D, T (stopped: a frozen
    member is live), t, I, W, P. A Z leader may still have live threads (has_live_thread)."""
    return state not in ("Z", "X", "x")


def has_live_thread(pid: int) -> bool:
    """A leader whose main thread called pthread_exit shows Z while another thread runs.
    A refused read counts as live: we cannot tell."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except PermissionError:
        return True
    except OSError:
        return False
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as handle:
                stat = parse_stat(handle.read().decode("utf-8", "surrogateescape"))
        except (OSError, ValueError, IndexError):
            continue
        if is_live_state(stat.state):
            return True
    return False


def list_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


class Scan(Frozen):
    __slots__ = ("members", "refused")
    members: list[ProcStat]
    """Every process in view whose process group is the one asked for, zombies included."""
    refused: bool
    """Some process's stat was refused: it may be a member we cannot see."""


def scan_group(pgid: int) -> Scan:
    members = []
    refused = False
    for pid in list_pids():
        try:
            stat = read_stat(pid)
        except PermissionError:
            refused = True
            continue
        if stat is not None and stat.pgrp == pgid:
            members.append(stat)
    return Scan(members, refused)


def group_members(pgid: int) -> list[ProcStat]:
    return scan_group(pgid).members


RECENT_PIDS = 64
"""How many of the pids handed out last a session scan reads once more at its end."""


def recent_pids(count: int = RECENT_PIDS) -> list[int]:
    """The `count` pids handed out last in our pid namespace (ns_last_pid), newest first; none
    when the file is not readable. A process that forks its successor and ends within a few ms
    (a fork chain) is rarely in a listing of /proc, but most often among these."""
    try:
        with open("/proc/sys/kernel/ns_last_pid", "rb") as handle:
            last = int(handle.read())
    except (OSError, ValueError):
        return []
    return [pid for pid in range(last, last - count, -1) if pid > 1]


def scan_session(sid: int) -> Scan:
    """Every process in view whose session or process group is `sid`, zombies included: the
    id of a session leader names its session and its own process group (a job of a shell with
    job control has its own group in the same session; a group that took the id after the
    session ended is in another session). The listing is followed by a read of the pids handed
    out last, so that a fork chain is in view too."""
    return SessionScans(sid).scan()


class SessionScans:
    """scan_session again and again, each scan after the first reading only what may have changed.

    A process read outside the session stays outside for its life: it leaves its session only by
    setsid, into a session of its own id (never `sid`, which a live group holds), and it joins a
    group only within its own session. So a later scan skips every /proc entry read outside
    before, known by its pid and the inode of its entry: a pid given to a new process is a new
    entry with another inode (inode 1 means /proc could not make one: always read). Members, and
    entries that are new or were refused, are read every time. For the rounds of one judgement
    (linux_autogroup's frozen judgement): a new process must be read, whatever the scan before."""

    def __init__(self, sid: int) -> None:
        self.sid = sid
        self._outside: dict[int, int] = {}  # pid -> the inode of its entry when read outside

    def scan(self) -> Scan:
        members: dict[int, ProcStat] = {}
        refused = False
        listing = _listing()
        outside: dict[int, int] = {}
        for pid, inode in listing:
            if inode != 1 and self._outside.get(pid) == inode:
                outside[pid] = inode
                continue
            found = self._read(pid, members)
            refused = refused or found == "refused"
            if found == "outside" and inode != 1:
                outside[pid] = inode
        for pid in recent_pids():  # taken after the listing's reads, and read again every time
            refused = self._read(pid, members) == "refused" or refused
        self._outside = outside
        return Scan(list(members.values()), refused)

    def _read(self, pid: int, members: dict[int, ProcStat]) -> str:
        """"member" (kept in `members`), "outside" (read, not of the session), "gone" or
        "refused"."""
        try:
            stat = read_stat(pid)
        except PermissionError:
            return "refused"
        if stat is None:
            return "gone"
        if stat.session == self.sid or stat.pgrp == self.sid:
            members[pid] = stat
            return "member"
        return "outside"


def _listing() -> list[tuple[int, int]]:
    """The pids in /proc with the inode of each entry (from the directory itself: no stat)."""
    with os.scandir("/proc") as entries:
        return [(int(entry.name), entry.inode()) for entry in entries if entry.name.isdigit()]


DEFAULT_AUTOGROUP = 0
"""The autogroup of every process whose ancestors never called setsid since boot (the kernel's
threads, PID 1 and what it starts directly). Its file is empty; real autogroup ids start at 1."""


def parse_autogroup(text: str) -> int | None:
    # "/autogroup-123 nice 0"; an empty file is the default autogroup
    if not text.strip():
        return DEFAULT_AUTOGROUP
    first = text.split()[0]
    if not first.startswith("/autogroup-"):
        return None
    try:
        return int(first[len("/autogroup-") :])
    except ValueError:
        return None


def read_autogroup(pid: int | str) -> int | None:
    """The autogroup id (DEFAULT_AUTOGROUP for the default one); None when the process is gone
    or the kernel has no autogroups. PermissionError passes through."""
    try:
        with open(f"/proc/{pid}/autogroup", "rb") as handle:
            return parse_autogroup(handle.read().decode("ascii", "replace"))
    except (FileNotFoundError, ProcessLookupError):
        return None


_boot_id: str | None = None


def boot_id() -> str | None:
    global _boot_id
    if _boot_id is None:
        try:
            with open("/proc/sys/kernel/random/boot_id") as handle:
                _boot_id = handle.read().strip()
        except OSError:
            return None
    return _boot_id


_own_pid_namespace: tuple[int, int] = (0, 0)
"""(our pid, the inode of our pid namespace): a process never changes its own pid namespace, and
a fork's child (another pid) reads its own; judging 100 hosts reads it once, not 100 times."""


def pid_namespace(pid: int | str = "self") -> int | None:
    global _own_pid_namespace
    if pid == "self" and _own_pid_namespace[0] == os.getpid():
        return _own_pid_namespace[1]
    try:
        inode = os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return None
    if pid == "self":
        _own_pid_namespace = (os.getpid(), inode)
    return inode


def proc_shows_own_pid_space() -> bool:
    """/proc belongs to this process's pid namespace when /proc/self names our own pid."""
    try:
        return int(os.readlink("/proc/self")) == os.getpid()
    except (OSError, ValueError):
        return False
