"""The program's output from the PTY read on: the echo filter that hides a `run`'s postamble
(ADR 0007), the gate that says where an input's echo ends, then the event log, the screen, the
output stream, the run markers and the waits, in that order for every read."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from agent_tty.host.echo import EchoFilter, can_filter
from agent_tty.host.terminal import RUN_MARKER, LiveScreen
from agent_tty.terminal.output import ProgramOutput, visible

if TYPE_CHECKING:
    from agent_tty.host.eventlog import EventLog
    from agent_tty.host.waits import Waits

HOLD_S = 0.05
"""An escape sequence cut by a read, mid-echo, waits this long at most for its end (ADR 0007)."""


class OutputSide(Protocol):
    """What the output path feeds and asks of its host, and nothing else of it."""

    events: EventLog
    live: LiveScreen
    output: ProgramOutput
    waits: Waits
    last_activity: float
    last_output: float

    def after(self, delay: float, callback: Callable[[], None]) -> int: ...

    def cancel(self, timer_id: int) -> None: ...


class OutputPath:
    def __init__(self, host: OutputSide) -> None:
        self.host = host
        self.echo: EchoFilter | None = None
        """Hides the echo of the last `run`'s completion postamble (ADR 0007)."""
        self.gate_echo: EchoFilter | None = None
        """The filter whose echo end opens the output gate (the latest input was that run)."""
        self.gate_budget = 0
        self.held = b""
        self.hold_timer: int | None = None
        self.marker_tail = b""

    @property
    def following_echo(self) -> bool:
        """A run's echo is being followed: the next run waits (one echo filter at a time)."""
        return self.echo is not None and not self.echo.finished

    def input_sent(self, size: int) -> None:
        """An input of `size` bytes went to the program: its echo ends the gate, after the first
        newline the program prints or, past a budget, wherever the output stands."""
        self.gate_echo = None
        self.gate_budget = 4 * size + 4096

    def record(self, data: bytes, final: bool = False) -> None:
        """One read of the program's output (`final`: no more will come to end a held sequence)."""
        host = self.host
        if self.held:
            data, self.held = self.held + data, b""
            self._cancel_hold()
        hide: list[int] | None = None
        echo_end: int | None = None
        newline_from = 0
        echo = self.echo
        if echo is not None:
            decided, hide = echo.scan(data, host.live.screen(), final)
            if decided < len(data):
                self._hold(data[decided:])
                data = data[:decided]
            if echo.finished:
                self.echo = None
                if echo is self.gate_echo:
                    self.gate_echo = None
                    if echo.echo_end is not None:
                        echo_end = echo.echo_end
                    elif echo.failed_at is not None:
                        newline_from = echo.failed_at
        if echo_end is None and not host.output.open and self.gate_echo is None:
            echo_end = self._echo_end(data, newline_from)
        if not data:
            return
        host.events.output(data, hide or None, echo_end)
        host.live.feed(visible(data, hide) if hide else data)
        host.output.output(data, hide, echo_end)
        host.last_activity = host.last_output = time.monotonic()
        window = self.marker_tail + data
        for match in RUN_MARKER.finditer(window):
            if match.end() > len(self.marker_tail):
                host.waits.run_completed(match.group(1).decode(), int(match.group(2)))
        self.marker_tail = window[-64:]
        if host.waits.pending:
            host.waits.on_output()

    def _hold(self, rest: bytes) -> None:
        """The echo filter needs the next read to judge `rest` (an escape sequence cut in two)."""
        self.held = rest
        self.hold_timer = self.host.after(HOLD_S, self._hold_expired)

    def _hold_expired(self) -> None:
        self.hold_timer = None
        self.flush_held()

    def _cancel_hold(self) -> None:
        if self.hold_timer is not None:
            self.host.cancel(self.hold_timer)
            self.hold_timer = None

    def flush_held(self) -> None:
        """Before an input or a mark, at the end, or when the rest of a held sequence never came."""
        if self.held:
            self.record(b"", final=True)

    def _echo_end(self, data: bytes, start: int) -> int | None:
        """Where the echo of the last input ends: after the first newline the program prints
        (from `start`); at the end of `data` when none came within the input's budget."""
        newline = data.find(b"\n", start)
        if newline >= 0:
            return newline + 1
        self.gate_budget -= len(data)
        return len(data) if self.gate_budget < 0 else None

    def arm_echo(self, command: str, postamble: str) -> None:
        """Hide the echo of `postamble` that `run` typed after the last line of `command`. The
        end of that echo opens the output's gate, except for a command of several lines: its
        output starts after its first line's echo (the shell runs each line as it reads it),
        and the echoes of the later lines are cut from its text (`without_echoes`)."""
        line = (command + postamble).rsplit("\n", 1)[-1]
        if len(line) > len(postamble) and can_filter(line):
            self.echo = EchoFilter(line, len(line) - len(postamble))
            self.gate_echo = None if "\n" in command else self.echo

