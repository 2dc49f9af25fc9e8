"""Every hook a platform plugin can implement, grouped by phase.

Unless a hook says otherwise it is `firstresult`: the plugin whose mechanism the call names
answers, every other plugin returns None.
"""

from __future__ import annotations

from typing import Any

from agent_tty.platform import hookspec
from agent_tty.platform.types import (
    CapturedProgram,
    GroupRef,
    GroupVerdict,
    HostVerdict,
    ProbeResult,
    ProgramHandle,
    SpawnRequest,
)

# ---------------------------------------------------------------- choosing a platform


@hookspec
def agent_tty_probe() -> ProbeResult:
    """Say whether this plugin can work in this process, and how well (rank).

    Not firstresult: every plugin answers. The manager calls it at most once per process.
    All platforms.
    """
    raise NotImplementedError


# ---------------------------------------------------------------- starting a program


@hookspec(firstresult=True)
def agent_tty_spawn(request: SpawnRequest) -> ProgramHandle | None:
    """Start `request.argv` in a new PTY as the leader of a new session and process group,
    placed in its group before it runs any code of its own. Return None when
    `request.mechanism` is not this plugin's. Raise OSError when the program cannot start.
    """
    raise NotImplementedError


@hookspec(firstresult=True)
def agent_tty_capture_program(mechanism: str, pid: int, host_pid: int) -> CapturedProgram | None:
    """Read what later proves that a process group is the program's (program.json's proof).

    Called by the host right after the spawn, in the same synchronous block as the write
    of program.json (RecordsProgramSync). Must return quickly (bounded, ~250 ms at most).
    """
    raise NotImplementedError


@hookspec(firstresult=True)
def agent_tty_capture_reap(mechanism: str, pid: int) -> dict[str, Any] | None:
    """Read, right after the host reaped the program's leader `pid`, what later tells the
    program's leftovers from processes that took the id once the program's session ended.

    Called by the host only, once, in the same step as the reap (waitpid), never by a command.
    The host writes the answer into program.json (`reaped`) and every later GroupRef carries it
    as `reaped`; it stays None when the host died first and another process reaped the leader,
    so a judge must not need it to read a group OWNED through a token. Return None when the
    plugin needs nothing (a token or a cgroup proves members without it). Must be cheap: no
    scan. macos_ps records the moment, on the clock of its start times (ADR 0026).
    """
    raise NotImplementedError


@hookspec(firstresult=True)
def agent_tty_runs_inside(mechanism: str, program_pid: int, host_identity: dict[str, Any] | None) -> bool | None:
    """Whether this very process runs inside the program's session (a destroy the program
    ran would die in its own kill: ReRunsInNewSession). Err towards True. `host_identity` is
    host.json's identity (None when missing): it tells whether the program was started in this
    process's pid namespace.
    """
    raise NotImplementedError


@hookspec(firstresult=True)
def agent_tty_leave_program_group(mechanism: str) -> bool | None:
    """Move this very process out of the program's group, if it is in it (a destroy that the
    program ran re-runs itself detached and must survive its own kill). True when outside."""
    raise NotImplementedError


# ---------------------------------------------------------------- the program's group


@hookspec(firstresult=True)
def agent_tty_judge_group(group: GroupRef) -> GroupVerdict | None:
    """Judge the group that `group` names, without signalling it."""
    raise NotImplementedError


@hookspec(firstresult=True)
def agent_tty_kill_group(group: GroupRef, signal: int) -> GroupVerdict | None:
    """Prove the group and signal it in one synchronous step; signal only when OWNED.

    Return the verdict the proof read. This is the only path by which any signal reaches a
    program's group (R15: no kill of a group that took the id). A group that could fork away
    from a kill is the plugin's to freeze inside this step (cgroup.freeze where cgroup.kill is
    missing, SIGSTOP for a chain no scan sees), and to thaw before it returns: there is no
    freeze hook, because a freeze held across two hook calls outlives a caller that dies
    between them (docs/adr/0009-freeze-inside-the-plugin-step.md).
    """
    raise NotImplementedError


@hookspec(firstresult=True)
def agent_tty_group_alive(group: GroupRef) -> bool | None:
    """Whether the group may still have a live member: True when owned or when the answer
    is unknown (a wait must not pass on a guess), False when gone or someone else's.
    """
    raise NotImplementedError


@hookspec(firstresult=True)
def agent_tty_release_group(group: GroupRef) -> bool | None:
    """Free what the plugin made for this group (a cgroup leaf) once nothing of it runs.
    Return True when released or nothing was held. Called by the host at its end and by gc."""
    raise NotImplementedError


@hookspec
def agent_tty_sweep(home: str, session_ids: list[str]) -> list[str]:
    """Not firstresult: every plugin may free what a crash left behind for this Home, for
    sessions not in `session_ids` (their folders are gone). Return what was freed."""
    raise NotImplementedError


# ---------------------------------------------------------------- the host's identity


@hookspec(firstresult=True)
def agent_tty_capture_host(mechanism: str, pid: int) -> dict[str, Any] | None:
    """Read what later proves that `pid` is still the same host process (host.json)."""
    raise NotImplementedError


@hookspec(firstresult=True)
def agent_tty_judge_host(mechanism: str, pid: int, identity: dict[str, Any] | None) -> HostVerdict | None:
    """ALIVE when the identity matches, DEAD only on proof, UNKNOWN otherwise (R2, R19).
    `identity` is None when host.json is missing or unreadable.
    """
    raise NotImplementedError


@hookspec(firstresult=True)
def agent_tty_kill_host(mechanism: str, pid: int, identity: dict[str, Any]) -> HostVerdict | None:
    """SIGKILL the host only when the identity proves it, in one step (R19). Return the
    verdict the proof read (ALIVE: killed)."""
    raise NotImplementedError
