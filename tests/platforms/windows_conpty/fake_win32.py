"""Fakes of plugins/windows_conpty/layer.Win32 that keep Windows' semantics, for Linux.

FakeWin32 simulates processes in memory: pids that are reused with a new creation time, users
(SIDs), jobs with a name, an owner, an ACL and a handle count, KILL_ON_JOB_CLOSE (the last handle's
close ends every member, and the name goes with the object), TerminateJobObject ending every
member at once, process handles that pin a pid, and logon sessions. Deterministic, for the
plugin's logic.

LinuxWin32 gives the same semantics to real Linux processes, for the behavioural contract kit:
the "ConPTY" is a real PTY (spawn_in_pty, a new session), a job is the process group of the program
it holds (the fake freezes the group with SIGSTOP to count its members exactly, as
ActiveProcesses does, and a job that read empty once stays empty, as a job nothing can join), a
process handle remembers the start time it pinned. What it cannot keep: a member that leaves the
process group (setpgid, setsid) leaves this fake's job, never a real one.
"""

from __future__ import annotations

import errno
import itertools
import os
import select
import signal
import threading
import time
from dataclasses import dataclass, field

ME = "S-1-5-21-1000"
OTHER = "S-1-5-21-2000"


# ---------------------------------------------------------------- in memory


@dataclass
class Proc:
    pid: int
    created: int
    user: str = ME
    argv: list[str] = field(default_factory=list)
    exit_code: int | None = None
    job: str | None = None


@dataclass
class Job:
    name: str
    owner: str
    readers: set[str]
    handles: int = 0
    kill_on_close: bool = True


class FakeWin32:
    def __init__(self) -> None:
        self.procs: dict[int, Proc] = {}
        self.jobs: dict[str, Job] = {}
        self.handles: dict[int, tuple[str, object]] = {}
        self._next = itertools.count(0x100, 4)
        self._clock = itertools.count(132_000_000_000_000_000, 10_000)
        self.logon = 1
        self.calls: list[tuple[str, object]] = []
        """Every call that ends something: ("terminate_job", name), ("terminate_process", pid)."""
        self.refuse_job_open = False
        self.in_job = False

    # ---- the world, as a test arranges it

    def start(self, pid: int, user: str = ME, argv: list[str] | None = None, job: str | None = None) -> Proc:
        """A process takes `pid` (a new creation time; the old one's pid reused)."""
        proc = Proc(pid, next(self._clock), user, argv or [], None, job)
        self.procs[pid] = proc
        return proc

    def end(self, pid: int, code: int = 0) -> None:
        self.procs[pid].exit_code = code

    def members(self, name: str) -> list[Proc]:
        return [p for p in self.procs.values() if p.job == name and p.exit_code is None]

    def squat(self, name: str, owner: str, readers: set[str]) -> None:
        """Another user makes a job with `name`."""
        self.jobs[name] = Job(name, owner, readers, handles=1)

    # ---- layer.Win32

    def unusable_reason(self) -> str | None:
        return None

    def user_sid(self) -> str:
        return ME

    def logon_session(self) -> int:
        return self.logon

    def _handle(self, kind: str, target: object) -> int:
        handle = next(self._next)
        self.handles[handle] = (kind, target)
        return handle

    def create_job(self, name: str) -> int:
        if name in self.jobs:
            raise FileExistsError(errno.EEXIST, f"a job named {name} exists already")
        self.jobs[name] = Job(name, ME, {ME})
        self.jobs[name].handles = 1
        return self._handle("job", name)

    def open_job(self, name: str) -> int | None:
        job = self.jobs.get(name)
        if job is None:
            return None
        if self.refuse_job_open or ME not in job.readers or job.owner != ME:
            raise PermissionError(errno.EACCES, f"the job {name} is not this user's")
        job.handles += 1
        return self._handle("job", name)

    def _job(self, handle: int) -> Job:
        kind, name = self.handles[handle]
        assert kind == "job", kind
        return self.jobs[str(name)]

    def job_active(self, job: int) -> int:
        return len(self.members(self._job(job).name))

    def terminate_job(self, job: int, exit_code: int) -> None:
        name = self._job(job).name
        self.calls.append(("terminate_job", name))
        for proc in self.members(name):
            proc.exit_code = exit_code

    def close_handle(self, handle: int) -> None:
        kind, target = self.handles.pop(handle)
        if kind != "job":
            return
        job = self.jobs[str(target)]
        job.handles -= 1
        if job.handles == 0:
            if job.kill_on_close:
                for proc in self.members(job.name):
                    proc.exit_code = 1
            del self.jobs[job.name]  # the name goes with the object's last handle

    def spawn_in_job(self, job_name, argv, env, cwd, cols, rows):  # type: ignore[no-untyped-def]
        if job_name not in self.jobs:
            raise FileNotFoundError(errno.ENOENT, f"no job named {job_name}")
        pid = max(self.procs, default=1000) + 4
        self.start(pid, argv=list(argv), job=job_name)
        return FakePty(self, pid)

    def in_any_job(self) -> bool:
        return self.in_job

    def open_process(self, pid: int) -> int | None:
        proc = self.procs.get(pid)
        return None if proc is None else self._handle("process", proc)

    def _proc(self, handle: int) -> Proc:
        kind, proc = self.handles[handle]
        assert kind == "process", kind
        return proc  # type: ignore[return-value]

    def process_created(self, process: int) -> int:
        return self._proc(process).created

    def process_exited(self, process: int) -> bool:
        return self._proc(process).exit_code is not None

    def process_user_sid(self, process: int) -> str | None:
        return self._proc(process).user

    def process_command_line(self, pid: int) -> list[str] | None:
        proc = self.procs.get(pid)
        return None if proc is None else list(proc.argv)

    def terminate_process(self, process: int, exit_code: int) -> None:
        proc = self._proc(process)  # the pinned process, whoever has its pid now
        self.calls.append(("terminate_process", proc.pid))
        if proc.exit_code is None:
            proc.exit_code = exit_code


class FakePty:
    def __init__(self, win: FakeWin32, pid: int) -> None:
        self.win = win
        self.pid = pid
        self.output = threading.Event()
        self.written: list[bytes] = []
        self.size: tuple[int, int] | None = None
        self.closed = False

    def read(self, limit: int) -> bytes:
        # As a ConPTY's pipe: it ends when the console is closed, not when the program ends.
        while not self.closed:
            time.sleep(0.01)
        return b""

    def write(self, data: bytes) -> int:
        self.written.append(data)
        return len(data)

    def resize(self, cols: int, rows: int) -> None:
        self.size = (cols, rows)

    def exit_code(self) -> int | None:
        return self.win.procs[self.pid].exit_code

    def close(self) -> None:
        self.closed = True


# ---------------------------------------------------------------- on real Linux processes


def _stat(pid: int) -> tuple[str, int, int, int] | None:
    """state, pgid, start time (ticks), uid; None when no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().decode("utf-8", "replace").rpartition(")")[2].split()
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
    return fields[0], int(fields[2]), int(fields[19]), uid


def _live(state: str) -> bool:
    return state not in ("Z", "X")


@dataclass
class LinuxJob:
    name: str
    pgid: int | None = None
    handles: int = 0
    drained: bool = False


class LinuxWin32:
    """layer.Win32 on Linux processes (see the module's docstring for what it keeps)."""

    def __init__(self) -> None:
        self.jobs: dict[str, LinuxJob] = {}
        self.handles: dict[int, tuple[str, object]] = {}
        self._next = itertools.count(0x100, 4)
        self._lock = threading.Lock()

    def unusable_reason(self) -> str | None:
        return None if os.path.isdir("/proc/self") else "the Linux-backed fake needs /proc"

    def user_sid(self) -> str:
        return f"S-1-5-21-{os.geteuid()}"

    def logon_session(self) -> int:
        return 1

    def _handle(self, kind: str, target: object) -> int:
        with self._lock:
            handle = next(self._next)
            self.handles[handle] = (kind, target)
            return handle

    def create_job(self, name: str) -> int:
        if name in self.jobs:
            raise FileExistsError(errno.EEXIST, name)
        self.jobs[name] = LinuxJob(name, handles=1)
        return self._handle("job", name)

    def open_job(self, name: str) -> int | None:
        job = self.jobs.get(name)
        if job is None:
            return None
        job.handles += 1
        return self._handle("job", name)

    def _job(self, handle: int) -> LinuxJob:
        kind, name = self.handles[handle]
        assert kind == "job"
        return self.jobs[str(name)]

    def _members(self, job: LinuxJob) -> int:
        """Exact, as ActiveProcesses: the group is held still (SIGSTOP) while it is counted."""
        if job.pgid is None or job.drained:
            return 0
        try:
            os.killpg(job.pgid, signal.SIGSTOP)
        except ProcessLookupError:
            job.drained = True
            return 0
        try:
            count = 0
            for name in os.listdir("/proc"):
                if name.isdigit():
                    stat = _stat(int(name))
                    if stat is not None and stat[1] == job.pgid and _live(stat[0]):
                        count += 1
        finally:
            try:
                os.killpg(job.pgid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        if count == 0:
            job.drained = True  # nothing can join an empty job: its pgid may be reused later
        return count

    def job_active(self, job: int) -> int:
        return self._members(self._job(job))

    def terminate_job(self, job: int, exit_code: int) -> None:
        record = self._job(job)
        if record.pgid is not None and not record.drained:
            try:
                os.killpg(record.pgid, signal.SIGKILL)  # one call reaches every member
            except ProcessLookupError:
                pass

    def close_handle(self, handle: int) -> None:
        with self._lock:
            kind, target = self.handles.pop(handle)
        if kind != "job":
            return
        job = self.jobs[str(target)]
        job.handles -= 1
        if job.handles == 0:
            if self._members(job):
                os.killpg(job.pgid, signal.SIGKILL)  # type: ignore[arg-type]  # KILL_ON_JOB_CLOSE
            del self.jobs[job.name]

    def spawn_in_job(self, job_name, argv, env, cwd, cols, rows):  # type: ignore[no-untyped-def]
        from agent_tty.platform.types import SpawnRequest
        from agent_tty_plugins._posix.pty_spawn import spawn_in_pty

        job = self.jobs[job_name]
        pty = spawn_in_pty(SpawnRequest("fake", tuple(argv), env, cwd, cols, rows))
        job.pgid = pty.pid  # the new session's process group: the program is in it before exec
        return LinuxPty(pty)

    def in_any_job(self) -> bool:
        return False

    def open_process(self, pid: int) -> int | None:
        stat = _stat(pid)
        return None if stat is None else self._handle("process", (pid, stat[2]))

    def _pinned(self, process: int) -> tuple[int, int, tuple[str, int, int, int] | None]:
        kind, (pid, start) = self.handles[process]  # type: ignore[misc]
        assert kind == "process"
        stat = _stat(pid)
        return pid, start, (stat if stat is not None and stat[2] == start else None)

    def process_created(self, process: int) -> int:
        return self._pinned(process)[1]

    def process_exited(self, process: int) -> bool:
        stat = self._pinned(process)[2]
        return stat is None or not _live(stat[0])

    def process_user_sid(self, process: int) -> str | None:
        stat = self._pinned(process)[2]
        return None if stat is None else f"S-1-5-21-{stat[3]}"

    def process_command_line(self, pid: int) -> list[str] | None:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                return [part.decode() for part in handle.read().split(b"\0")[:-1]]
        except OSError:
            return None

    def terminate_process(self, process: int, exit_code: int) -> None:
        pid, _start, stat = self._pinned(process)
        if stat is not None:  # a handle pins its process: never the pid's next owner
            os.kill(pid, signal.SIGKILL)


class LinuxPty:
    """The PosixPty as the blocking, bytes-in-bytes-out Pty that pywinpty's wrapper is."""

    def __init__(self, pty) -> None:  # type: ignore[no-untyped-def]
        self._pty = pty
        self.pid = pty.pid
        self._closed = False
        self._code: int | None = None

    def read(self, limit: int) -> bytes:
        while not self._closed:
            ready, _, _ = select.select([self._pty.fd], [], [], 0.05)
            if not ready:
                continue
            data = self._pty.read(limit)
            if data is None:
                return b""
            if data:
                return data
        return b""

    def write(self, data: bytes) -> int:
        return self._pty.write(data)

    def resize(self, cols: int, rows: int) -> None:
        self._pty.resize(cols, rows)

    def exit_code(self) -> int | None:
        done = self._pty.poll_exit()
        if done is None:
            return None
        return done.exit_code if done.exit_code is not None else 128 + (done.exit_signal or 0)

    def close(self) -> None:
        self._closed = True
        time.sleep(0.06)  # the reader's select wakes within 50 ms and sees the flag
        self._pty.close()
