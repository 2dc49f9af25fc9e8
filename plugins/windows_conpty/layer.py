"""The Windows calls windows_conpty makes, as one typed interface, and the one that is in use.

win32.py implements it with ctypes (kernel32, advapi32), pywinpty and psutil, and is the only
module of the plugin that imports them: every other module reaches Windows through `current()`,
so the plugin's logic (proof before kill, the verdicts, the host's identity) runs on Linux against
a fake that keeps the same semantics (tests/platforms/windows_conpty/fake_win32.py).
"""

from __future__ import annotations

from typing import Protocol


class Pty(Protocol):
    """A program in a ConPTY, as pywinpty drives it."""

    pid: int

    def read(self, limit: int) -> bytes:
        """Blocks until output is ready; b"" once the pseudo console closed."""

    def write(self, data: bytes) -> int: ...

    def resize(self, cols: int, rows: int) -> None: ...

    def exit_code(self) -> int | None:
        """The program's exit code once it ended (never blocks); None while it runs."""

    def close(self) -> None:
        """Close the pseudo console. Ends nothing by itself: the job does that."""


class Win32(Protocol):
    def unusable_reason(self) -> str | None:
        """Why this process cannot use jobs and ConPTY here; None when it can."""

    def user_sid(self) -> str:
        """The string SID of this process's user: names its jobs, and owns them."""

    def logon_session(self) -> int:
        """This process's Terminal Services session: the namespace of `Local\\` names."""

    # ------------------------------------------------------------ jobs

    def create_job(self, name: str) -> int:
        """A new job named `name` (Local\\), owned by and open to this user only, with
        KILL_ON_JOB_CLOSE (its last handle's close ends every member) and no breakaway.
        FileExistsError when the name is taken: a job is never shared."""

    def open_job(self, name: str) -> int | None:
        """A handle to the job named `name`, only when this user owns it; None when no job has
        the name. PermissionError when one does that we may not open or do not own."""

    def job_active(self, job: int) -> int:
        """The job's active processes (JobObjectBasicAccountingInformation.ActiveProcesses):
        ended ones do not count, whoever still holds a handle to them."""

    def terminate_job(self, job: int, exit_code: int) -> None:
        """TerminateJobObject: every member ends, at once, as one call."""

    def close_handle(self, handle: int) -> None: ...

    def spawn_in_job(
        self, job_name: str, argv: tuple[str, ...], env: dict[str, str], cwd: str | None, cols: int, rows: int
    ) -> Pty:
        """Start `argv` in a new ConPTY, inside the job named `job_name` before it runs any code
        of its own. OSError when it cannot start."""

    def in_any_job(self) -> bool:
        """Whether this very process belongs to a job (IsProcessInJob(self, NULL))."""

    # ------------------------------------------------------------ processes

    def open_process(self, pid: int) -> int | None:
        """A handle that pins `pid` (query, terminate, synchronize): while it is open the pid
        names that process and no other. None when no process has the pid."""

    def process_created(self, process: int) -> int:
        """The process's creation time, in 100 ns ticks since 1601 (GetProcessTimes): exact."""

    def process_exited(self, process: int) -> bool: ...

    def process_user_sid(self, process: int) -> str | None:
        """The SID of the process's user; None when it cannot be read."""

    def process_command_line(self, pid: int) -> list[str] | None:
        """The process's command line; None when it cannot be read."""

    def terminate_process(self, process: int, exit_code: int) -> None:
        """TerminateProcess through the handle: the process the handle pins, never a pid."""


_layer: Win32 | None = None


def current() -> Win32:
    """The real layer, made on first use (importing it on Linux is safe; calling it is not)."""
    global _layer
    if _layer is None:
        from agent_tty_plugins.windows_conpty.win32 import RealWin32

        _layer = RealWin32()
    return _layer


def installed() -> Win32 | None:
    """The layer a test installed (or the real one once made); None before either."""
    return _layer


def install(layer: Win32 | None) -> Win32 | None:
    """Use `layer` from now on (tests: a fake); None goes back to the real one. Returns the old."""
    global _layer
    old, _layer = _layer, layer
    return old
