"""The running program as the host drives it: the Protocol a plugin's spawn returns.

Its own module because typing.Protocol costs ~2 ms to import, and only the host and the plugins'
spawn need it; `agent_tty.platform.types.ProgramHandle` names it too.
"""

from __future__ import annotations

from typing import Protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_tty.platform.types import ProgramExit


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
