"""linux_autogroup: prove a program's group by its session and autogroup (Linux).

The token is the program's session id (its pid: it leads its own session), its autogroup
id and the boot id. setsid() gives every new session a new autogroup from a counter that
does not repeat within a boot, and fork() passes it on, so a group that later takes the
program's id carries another autogroup and never gets a kill (R15). Without a token the
leader's pid and start time prove the leader alone.

The token proves every process of the program's session, not only its process group: a job of
an interactive shell (bash with job control) gets a process group of its own but keeps the
session id and the autogroup. A SIGKILL (destroy, gc's leftovers, a host that gives up) reaches
the program's group with one killpg and every other carrier of the token by pid, each proven
right before its kill; any other signal (the `signal` command's SIGINT, the shutdown's SIGHUP)
goes to the program's group alone, as a terminal would send it. A process that calls setsid
leaves the session and the autogroup, and with them our reach.

Every part of a token is world-readable in /proc, so a record (data anyone who can write the
Home may have planted) could name another user's session. A process proves a group or a host
ours only when its real uid is our effective uid; another user's process that carries the
token (a setuid helper of the program, or a planted record) reads "cannot tell".
"""

from __future__ import annotations

import os
import sys

from agent_tty.platform import hookimpl
from agent_tty.platform.types import (
    CapturedProgram,
    GroupRef,
    GroupVerdict,
    HostVerdict,
    ProbeResult,
    SpawnRequest,
)
from agent_tty_plugins._posix import procfs
from agent_tty_plugins.linux_autogroup import host, proof
from agent_tty_plugins.linux_autogroup.proof import capture_token

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command that judges a host ~2 ms
    from typing import Any

    from agent_tty.platform.handle import ProgramHandle

MECHANISM = "linux_autogroup"
RANK = 50


def _ours(mechanism: str) -> bool:
    return mechanism == MECHANISM


# ---------------------------------------------------------------- choosing a platform


@hookimpl
def agent_tty_probe() -> ProbeResult:
    if not sys.platform.startswith("linux"):
        return ProbeResult(MECHANISM, False, RANK, "not Linux")
    try:
        own = procfs.read_autogroup("self")
    except OSError as err:
        return ProbeResult(MECHANISM, False, RANK, f"/proc/self/autogroup is not readable ({err.strerror})")
    if own is None:
        return ProbeResult(MECHANISM, False, RANK, "no /proc/self/autogroup (kernel without CONFIG_SCHED_AUTOGROUP)")
    if procfs.boot_id() is None:
        return ProbeResult(MECHANISM, False, RANK, "the boot id is not readable")
    if not procfs.proc_shows_own_pid_space():
        return ProbeResult(MECHANISM, False, RANK, "/proc shows another pid namespace")
    # A caller in the default autogroup (started by PID 1 or a service manager without setsid)
    # is fine: each session's leader calls setsid and so gets an autogroup of its own.
    return ProbeResult(
        MECHANISM, True, RANK,
        "autogroups and /proc are available; a process that calls setsid leaves the session's reach",
        {"autogroup": own},
    )


# ---------------------------------------------------------------- starting a program


@hookimpl
def agent_tty_spawn(request: SpawnRequest) -> ProgramHandle | None:
    if not _ours(request.mechanism):
        return None
    from agent_tty_plugins._posix.pty_spawn import spawn_in_pty

    return spawn_in_pty(request, held=True)


@hookimpl
def agent_tty_capture_program(mechanism: str, pid: int, host_pid: int) -> CapturedProgram | None:
    if not _ours(mechanism):
        return None
    return CapturedProgram(proof=capture_token(pid, host_pid))


@hookimpl
def agent_tty_runs_inside(mechanism: str, program_pid: int, host_identity: dict[str, Any] | None) -> bool | None:
    if not _ours(mechanism):
        return None
    try:
        sid = os.getsid(0)
    except OSError:
        return True
    if sid != 0:
        return sid == program_pid
    # Session id 0: our session's leader lies outside our pid namespace (a container's shell,
    # a CI runner). The program leads its own session, so when the host started it in our pid
    # namespace that session cannot be ours; anything else we cannot tell.
    return not proof.started_in_our_pid_space(host_identity)


@hookimpl
def agent_tty_leave_program_group(mechanism: str) -> bool | None:
    if not _ours(mechanism):
        return None
    return True  # setsid already gave the re-run its own session, group and autogroup


# ---------------------------------------------------------------- the program's group
# group.py (with jobs.py) is imported by the group hooks only: `list` judges hosts, never groups.


@hookimpl
def agent_tty_judge_group(group: GroupRef) -> GroupVerdict | None:
    if not _ours(group.mechanism):
        return None
    from agent_tty_plugins.linux_autogroup import group as group_steps

    return group_steps.judge(group)[0]


@hookimpl
def agent_tty_kill_group(group: GroupRef, signal: int) -> GroupVerdict | None:
    """Any signal goes to the program's process group; a SIGKILL also ends the session's jobs
    (group.kill). SIGINT, SIGHUP and the rest reach the jobs only as the program passes them
    on: a terminal's ^C goes to the foreground group alone as well."""
    if not _ours(group.mechanism):
        return None
    from agent_tty_plugins.linux_autogroup import group as group_steps

    return group_steps.kill(group, signal)


@hookimpl
def agent_tty_group_alive(group: GroupRef) -> bool | None:
    if not _ours(group.mechanism):
        return None
    from agent_tty_plugins.linux_autogroup import group as group_steps

    return group_steps.alive(group)


# ---------------------------------------------------------------- the host's identity


@hookimpl
def agent_tty_capture_host(mechanism: str, pid: int) -> dict[str, Any] | None:
    if not _ours(mechanism):
        return None
    return host.capture(pid)


@hookimpl
def agent_tty_judge_host(mechanism: str, pid: int, identity: dict[str, Any] | None) -> HostVerdict | None:
    if not _ours(mechanism):
        return None
    return host.judge(pid, identity)


@hookimpl
def agent_tty_kill_host(mechanism: str, pid: int, identity: dict[str, Any]) -> HostVerdict | None:
    if not _ours(mechanism):
        return None
    return host.kill(pid, identity)
