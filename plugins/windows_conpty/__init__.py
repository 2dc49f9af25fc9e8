"""windows_conpty: a program in a ConPTY (pywinpty), its group a named Job Object that dies whole.

The host spawns the program through a trampoline that joins the session's job before the
program starts (trampoline.py), so nothing of the program runs outside the job. The job is the
group: TerminateJobObject ends every member in one call (like cgroup.kill), its active-process
count says whether anything runs, and it is named (`Local\\agent-tty-<SID>-<session>-<random>`,
owned by and open to the user only) so that any agent-tty process of the user in the same logon
session can prove and kill it. KILL_ON_JOB_CLOSE: the job, and every member, ends with its last
handle, the host's, so a host that dies takes the program with it. docs/adr/0016 says why.

Every Windows call goes through layer.current() (win32.py); on Linux the probe says "not
Windows" and the plugin is never chosen. The host's identity is its pid and creation time.

Limits: a CLI in another logon session reads the job UNSHARED (never gone); a destroy that the
program itself runs stays in the job and ends with it (no breakaway); Windows has no signals, so
every Stop ends the job and a hang-up gets no grace; ^C reaches the console through ConPTY.
"""

from __future__ import annotations

from typing import Any

from agent_tty.platform import hookimpl
from agent_tty.platform.types import (
    CapturedProgram,
    GroupRef,
    GroupVerdict,
    HostVerdict,
    ProbeResult,
    ProgramHandle,
    SpawnRequest,
)

MECHANISM = "windows_conpty"
RANK = 80
"""What linux_cgroup proves, on Windows: one object holds every member, and one call ends them."""

REASON = "ConPTY (pywinpty) with a named Job Object per session: an atomic kill of every member"


def _ours(mechanism: str) -> bool:
    return mechanism == MECHANISM


# ---------------------------------------------------------------- choosing a platform


@hookimpl
def agent_tty_probe() -> ProbeResult:
    import sys

    from agent_tty_plugins.windows_conpty import layer

    if sys.platform != "win32" and layer.installed() is None:
        # Off Windows nothing of Windows is touched, unless a test installed a fake layer.
        return ProbeResult(MECHANISM, False, RANK, "not Windows")

    win = layer.current()
    reason = win.unusable_reason()
    if reason is not None:
        return ProbeResult(MECHANISM, False, RANK, reason)
    try:
        win.user_sid()
        win.logon_session()
    except OSError as err:
        return ProbeResult(MECHANISM, False, RANK, f"cannot read this process's user or logon session ({err})")
    return ProbeResult(MECHANISM, True, RANK, REASON)


# ---------------------------------------------------------------- starting a program


@hookimpl
def agent_tty_spawn(request: SpawnRequest) -> ProgramHandle | None:
    if not _ours(request.mechanism):
        return None
    from agent_tty_plugins.windows_conpty import spawn

    return spawn.spawn(request)


@hookimpl
def agent_tty_capture_program(mechanism: str, pid: int, host_pid: int) -> CapturedProgram | None:
    if not _ours(mechanism):
        return None
    from agent_tty_plugins.windows_conpty import job

    return CapturedProgram(proof=job.capture(pid))


@hookimpl
def agent_tty_runs_inside(mechanism: str, program_pid: int, host_identity: dict[str, Any] | None) -> bool | None:
    if not _ours(mechanism):
        return None
    from agent_tty_plugins.windows_conpty import layer

    try:
        return layer.current().in_any_job()  # err towards True: any job may be the program's
    except OSError:
        return True


@hookimpl
def agent_tty_leave_program_group(mechanism: str) -> bool | None:
    if not _ours(mechanism):
        return None
    from agent_tty_plugins.windows_conpty import layer

    # A job allows no breakaway: a process inside stays inside (the limit in the docstring).
    try:
        return not layer.current().in_any_job()
    except OSError:
        return False


# ---------------------------------------------------------------- the program's group


@hookimpl
def agent_tty_judge_group(group: GroupRef) -> GroupVerdict | None:
    if not _ours(group.mechanism):
        return None
    from agent_tty_plugins.windows_conpty import job

    return job.judge(group)


@hookimpl
def agent_tty_kill_group(group: GroupRef, signal: int) -> GroupVerdict | None:
    if not _ours(group.mechanism):
        return None
    from agent_tty_plugins.windows_conpty import job

    return job.kill(group, signal)


@hookimpl
def agent_tty_group_alive(group: GroupRef) -> bool | None:
    if not _ours(group.mechanism):
        return None
    from agent_tty_plugins.windows_conpty import job

    return job.alive(group)


@hookimpl
def agent_tty_release_group(group: GroupRef) -> bool | None:
    if not _ours(group.mechanism):
        return None
    from agent_tty_plugins.windows_conpty import job

    return job.release(group)


@hookimpl
def agent_tty_sweep(home: str, session_ids: list[str]) -> list[str]:
    return []  # a job ends with its last handle: nothing of it outlives the processes that hold it


# ---------------------------------------------------------------- the host's identity


@hookimpl
def agent_tty_capture_host(mechanism: str, pid: int) -> dict[str, Any] | None:
    if not _ours(mechanism):
        return None
    from agent_tty_plugins.windows_conpty import host

    return host.capture(pid)


@hookimpl
def agent_tty_judge_host(mechanism: str, pid: int, identity: dict[str, Any] | None) -> HostVerdict | None:
    if not _ours(mechanism):
        return None
    from agent_tty_plugins.windows_conpty import host

    return host.judge(pid, identity)


@hookimpl
def agent_tty_kill_host(mechanism: str, pid: int, identity: dict[str, Any]) -> HostVerdict | None:
    if not _ours(mechanism):
        return None
    from agent_tty_plugins.windows_conpty import host

    return host.kill(pid, identity)
