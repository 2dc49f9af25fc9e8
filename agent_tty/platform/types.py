"""The typed values that cross the platform seam."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


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


@dataclass(frozen=True, slots=True)
class ProbeResult:
    name: str
    usable: bool
    rank: int
    """Higher wins among usable plugins."""
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SpawnRequest:
    mechanism: str
    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: str | None
    cols: int
    rows: int
    session_id: str = ""
    """Names per-session resources a plugin makes (a cgroup leaf)."""
    home: str = ""
    """The Home's path: a plugin keeps the resources of different Homes apart."""
    umask: int | None = None
    """The file mode mask the program starts with: its caller's at create (the host itself runs
    under 0o077). None: the plugin's own process's."""


@dataclass(frozen=True, slots=True)
class ProgramExit:
    exit_code: int | None
    exit_signal: int | None


class ProgramHandle(Protocol):
    """The running program as the host drives it; a plugin's spawn returns one."""

    pid: int
    fd: int
    """Readable when the PTY has output (select/poll); the host never reads it directly."""

    def read(self, limit: int) -> bytes | None:
        """Output that is ready; b"" when none is ready; None once the PTY closed."""

    def write(self, data: bytes) -> int:
        """Input to the program; returns how much was written."""

    def resize(self, cols: int, rows: int) -> None: ...

    def poll_exit(self) -> ProgramExit | None:
        """Reap the program if it ended (never blocks); None while it runs."""

    # Optional: `release() -> None` lets a program spawned held at its start (placed in its
    # group, none of its own code run) exec; the host calls it once program.json names the
    # program, so a host that dies before that leaves nothing running (StartGate). It raises
    # OSError when the exec fails. No such method: the program runs from the spawn on.
    # Optional: `signal_foreground(number) -> int | None` delivers a keyboard signal (INT,
    # QUIT, TSTP) as the terminal does, to its foreground group, and returns that group's id;
    # None (or no such method) makes the host signal the program's group through kill_group.

    def close(self) -> None:
        """Close the PTY. Never signals: every signal goes through the proof-then-kill path."""


@dataclass(frozen=True, slots=True)
class CapturedProgram:
    proof: dict[str, Any] | None
    """Data that proves membership later; None when the capture read none."""


@dataclass(frozen=True, slots=True)
class GroupRef:
    """A program's group as a record names it, for judging, killing and waiting."""

    mechanism: str
    pid: int
    proof: dict[str, Any] | None
    folder: Path
    """The session folder: a group without proof is acted on only while it exists."""
    host_identity: dict[str, Any] | None = None
    """host.json's identity, to tell whether this process shares the host's pid space."""
    session_id: str = ""
    reaped: dict[str, Any] | None = None
    """What capture_reap read when the host reaped the program's leader (program.json's
    `reaped`); None while no host of ours reaped it: the leader runs, it was reaped by another
    process (the host died first), the plugin reads nothing then, or an older host wrote the
    record."""
