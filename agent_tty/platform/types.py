"""The typed values that cross the platform seam.

They are frozen value classes (agent_tty.frozen): keyword or positional construction, defaults,
equality, repr and `replace(**changes)` as the frozen dataclasses they were, without the 5-10 ms
`import dataclasses` costs every command that judges a host (list, inspect: issue 26, ADR 0046).
`ProgramHandle`, a typing.Protocol, is made on first use for the same reason.
"""

from __future__ import annotations

import enum

from agent_tty.frozen import Default, Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from pathlib import Path
    from typing import Any

    from agent_tty.platform.handle import ProgramHandle  # noqa: F401 - for type checkers; __getattr__ below at run time


class GroupVerdict(enum.StrEnum):
    OWNED = "owned"
    """A live member carries the program's proof: the group is the session's."""
    GONE = "gone"
    """No live member is in view."""
    UNPROVEN = "unproven"
    """Live processes hold the id, but none carries the proof: someone else's group."""
    UNKNOWN = "unknown"
    """A read was refused or failed: cannot tell."""
    UNSHARED = "unshared"
    """This process does not see the host's pid space."""
    AMBIGUOUS = "ambiguous"
    """Live processes hold the id as the program's leftovers would, but the proof cannot tell
    them from a group that took the id after the program's ended (macos_ps: a member that
    started after the leader's reap, or no reap was recorded). Never signalled (R15); it keeps
    the session (R20): gc keeps its folder and destroy refuses, saying so (ADR 0026)."""


class Stop(enum.IntEnum):
    """The signals the core sends a program's group, by their POSIX numbers (the same on Linux
    and macOS). kill_group receives these numbers; a plugin for a system without signals maps
    each to its own way (KILL: end every process of the group at once)."""

    HANGUP = 1
    INTERRUPT = 2
    KILL = 9
    TERMINATE = 15


class HostVerdict(enum.StrEnum):
    ALIVE = "alive"
    DEAD = "dead"
    """Only on proof: no process has the pid, a zombie has it, or another one took it."""
    UNKNOWN = "unknown"


class ProbeResult(Frozen):
    __slots__ = ("name", "usable", "rank", "reason", "details")
    DEFAULTS = {"details": Default(dict)}
    name: str
    usable: bool
    rank: int
    """Higher wins among usable plugins."""
    reason: str
    details: dict[str, Any]


class SpawnRequest(Frozen):
    __slots__ = ("mechanism", "argv", "env", "cwd", "cols", "rows", "session_id", "home", "umask")
    DEFAULTS = {"session_id": "", "home": "", "umask": None}
    mechanism: str
    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: str | None
    cols: int
    rows: int
    session_id: str
    """Names per-session resources a plugin makes (a cgroup leaf)."""
    home: str
    """The Home's path: a plugin keeps the resources of different Homes apart."""
    umask: int | None
    """The file mode mask the program starts with: its caller's at create (the host itself runs
    under 0o077). None: the plugin's own process's."""


class ProgramExit(Frozen):
    __slots__ = ("exit_code", "exit_signal")
    exit_code: int | None
    exit_signal: int | None


class CapturedProgram(Frozen):
    __slots__ = ("proof",)
    proof: dict[str, Any] | None
    """Data that proves membership later; None when the capture read none."""


class GroupRef(Frozen):
    """A program's group as a record names it, for judging, killing and waiting."""

    __slots__ = ("mechanism", "pid", "proof", "folder", "host_identity", "session_id", "reaped")
    DEFAULTS = {"host_identity": None, "session_id": "", "reaped": None}

    mechanism: str
    pid: int
    proof: dict[str, Any] | None
    folder: Path
    """The session folder: a group without proof is acted on only while it exists."""
    host_identity: dict[str, Any] | None
    """host.json's identity, to tell whether this process shares the host's pid space."""
    session_id: str
    reaped: dict[str, Any] | None
    """What capture_reap read when the host reaped the program's leader (program.json's
    `reaped`); None while no host of ours reaped it: the leader runs, it was reaped by another
    process (the host died first), the plugin reads nothing then, or an older host wrote the
    record."""


def __getattr__(name: str) -> object:
    if name == "ProgramHandle":  # typing.Protocol, imported only by those who need it
        from agent_tty.platform.handle import ProgramHandle

        globals()[name] = ProgramHandle
        return ProgramHandle
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
