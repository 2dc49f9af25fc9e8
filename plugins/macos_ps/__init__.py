"""macos_ps: the fallback off Linux; proves a program's group by its leader's pid and start time.

macOS has no session token (no autogroups, no cgroups), so this is the "no token" path of the
lifecycle model: program.json records the leader's start time, and a group is the program's
while a live member of ours runs in it and the leader with that start time still exists, or
the leader gone, the member is in the program's session and started no later than the moment
the host reaped the leader, which capture_reap records in program.json (group.py says why that
holds; ADR 0026). host.json records the host's start time and the session its command line
names (host.py).

It reads processes through psutil (imported only inside the hooks that need it: commands that
never judge a process do not pay for it), and the process group and session ids through
os.getpgid/os.getsid. On Linux it probes usable with the lowest rank, so it is chosen only when
pinned (AGENT_TTY_MECHANISM=macos_ps) or when nothing better works: the integration suite runs
pinned to it there.

Limits: a kill reaches the program's process group only, not a job of an interactive shell in
a group of its own; R15 and R16 hold only as far as the leader's pid and start time prove the
group (the model's current-no-token run leaves them out); on macOS a zombie reads alive until
it is reaped; on Linux a start time counts in clock ticks (10 ms), and a CLI in another pid
namespace is not told apart (no UNSHARED verdict): pin it there only in one pid namespace.
Once the leader is gone, a member that started after the host's reap (a fork chain that
outlived the leader) and every member when no host reaped it (the host died first, or an older
agent-tty wrote the record) read AMBIGUOUS: never signalled, so destroy refuses and gc keeps
the session until they end, since a session that took the pid looks the same. On Linux one
that took it within the reap's 10 ms tick is not told apart (the pid space must wrap within
that tick); on macOS, where start times are wall-clock times, neither is one started after a
step of the clock back past the reap.
"""

from __future__ import annotations

import os
import sys
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

MECHANISM = "macos_ps"
RANK_DARWIN = 30
RANK_LINUX = 10
"""The lowest of the built-ins (linux_autogroup 50, linux_cgroup 80): on Linux only when pinned."""


REASON = (
    "psutil reads process groups and start times; without a session token a kill reaches "
    "the program's process group only, and a zombie reads alive until it is reaped"
)


def _ours(mechanism: str) -> bool:
    return mechanism == MECHANISM


# ---------------------------------------------------------------- choosing a platform


@hookimpl
def agent_tty_probe() -> ProbeResult:
    if sys.platform == "darwin":
        rank = RANK_DARWIN
    elif sys.platform.startswith("linux"):
        rank = RANK_LINUX
    else:
        return ProbeResult(MECHANISM, False, RANK_DARWIN, "neither macOS nor Linux")
    if rank == RANK_LINUX:
        # Here it is the last resort, chosen only when pinned: finding psutil is enough, and
        # every create that probes need not pay for importing it (tens of ms).
        import importlib.util

        if importlib.util.find_spec("psutil") is None:
            return ProbeResult(MECHANISM, False, rank, "psutil is not installed: pip install psutil")
        return ProbeResult(MECHANISM, True, rank, REASON + "; on Linux a last resort (pin it to use it)")
    try:
        import psutil
    except ImportError as err:
        return ProbeResult(MECHANISM, False, rank, f"psutil cannot be imported ({err}): pip install psutil")
    # The capability probe: the reads every verdict needs, tried on our own process.
    try:
        me = psutil.Process()
        me.create_time()
        me.uids()
        os.getpgid(0)
        os.getsid(0)
    except (OSError, psutil.Error) as err:
        return ProbeResult(MECHANISM, False, rank, f"psutil cannot read this process ({err})")
    return ProbeResult(MECHANISM, True, rank, REASON, {"psutil": psutil.__version__})


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
    from agent_tty_plugins.macos_ps import group

    return CapturedProgram(proof=group.capture(pid, host_pid))


@hookimpl
def agent_tty_capture_reap(mechanism: str, pid: int) -> dict[str, Any] | None:
    if not _ours(mechanism):
        return None
    from agent_tty_plugins.macos_ps import group

    return group.capture_reap()


@hookimpl
def agent_tty_runs_inside(mechanism: str, program_pid: int, host_identity: dict[str, Any] | None) -> bool | None:
    if not _ours(mechanism):
        return None
    from agent_tty_plugins.macos_ps import inside

    return inside.runs_inside(program_pid)


@hookimpl
def agent_tty_leave_program_group(mechanism: str) -> bool | None:
    if not _ours(mechanism):
        return None
    return True  # setsid already gave the re-run its own session and process group


# ---------------------------------------------------------------- the program's group


@hookimpl
def agent_tty_judge_group(group: GroupRef) -> GroupVerdict | None:
    if not _ours(group.mechanism):
        return None
    from agent_tty_plugins.macos_ps import group as groups

    return groups.judge(group)[0]


@hookimpl
def agent_tty_kill_group(group: GroupRef, signal: int) -> GroupVerdict | None:
    if not _ours(group.mechanism):
        return None
    from agent_tty_plugins.macos_ps import group as groups

    return groups.kill(group, signal)


@hookimpl
def agent_tty_group_alive(group: GroupRef) -> bool | None:
    if not _ours(group.mechanism):
        return None
    from agent_tty_plugins.macos_ps import group as groups

    return groups.alive(group)


@hookimpl
def agent_tty_release_group(group: GroupRef) -> bool | None:
    if not _ours(group.mechanism):
        return None
    return True  # nothing was made for the group


@hookimpl
def agent_tty_sweep(home: str, session_ids: list[str]) -> list[str]:
    return []  # nothing outlives a session folder


# ---------------------------------------------------------------- the host's identity


@hookimpl
def agent_tty_capture_host(mechanism: str, pid: int) -> dict[str, Any] | None:
    if not _ours(mechanism):
        return None
    from agent_tty_plugins.macos_ps import host

    return host.capture(pid)


@hookimpl
def agent_tty_judge_host(mechanism: str, pid: int, identity: dict[str, Any] | None) -> HostVerdict | None:
    if not _ours(mechanism):
        return None
    from agent_tty_plugins.macos_ps import host

    return host.judge(pid, identity)


@hookimpl
def agent_tty_kill_host(mechanism: str, pid: int, identity: dict[str, Any]) -> HostVerdict | None:
    if not _ours(mechanism):
        return None
    from agent_tty_plugins.macos_ps import host

    return host.kill(pid, identity)
