"""Rebuild a session's screen from its event log, for sessions whose host has ended.

The log is read a line at a time and nothing keeps its events: a replay or an export holds
the screen and one line, whatever the log's size (docs/USAGE.md, Limits)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.storage.records import Event, EventLogHeader
from agent_tty.storage.schema import RecordError
from agent_tty.terminal.output import visible
from agent_tty.terminal.screen import Screen, open_screen

LINE_MAX = 16 << 20
"""The longest line a reader takes. The host writes at most an output of 64 KiB or an input of
a 1 MiB request, at most 6 bytes a character once JSON-escaped: a longer line is no line of
ours, and is REPLAY_FAILED rather than read whole into memory."""


class LoggedEvent(Event):
    """An event as the host writes it now: output may say what readers do not show (ADR 0007).
    Older agent-tty versions ignore these fields and show the raw bytes."""

    hide: tuple[int, ...] | None = None
    """Output: start, end pairs of byte offsets in `data` that no reader shows (the echo of
    `run`'s completion postamble)."""
    echo_end: int | None = None
    """Output: the byte offset in `data` where the echo of the last input ended."""


def _failed(path: Path, message: str) -> AgentTtyError:
    return AgentTtyError(ErrorCode.REPLAY_FAILED, message, path=str(path))


def _lines(stream: BinaryIO, path: Path) -> Iterator[tuple[int, bytes]]:
    """Each non-blank line with its number. A last line cut short (a host killed mid-write) is
    dropped; a line longer than LINE_MAX is REPLAY_FAILED, never an unbounded read."""
    number = 0
    while True:
        try:
            line = stream.readline(LINE_MAX + 1)
        except OSError as err:
            raise _failed(path, f"cannot read {path}: {err.strerror}") from None
        if not line:
            return
        number += 1
        if not line.endswith(b"\n"):
            if len(line) > LINE_MAX:
                raise _failed(path, f"{path}:{number}: a line longer than {LINE_MAX} bytes")
            return
        if line.strip():
            yield number, line


@contextmanager
def open_log(path: Path) -> Iterator[tuple[EventLogHeader, Iterator[LoggedEvent]]]:
    """The header and an iterator of the events, read as they are asked for. Any bad line
    is REPLAY_FAILED naming the line."""
    from agent_tty.storage.files import open_stream

    try:
        stream = open_stream(path)  # a regular file of ours, never through a link
    except FileNotFoundError:
        raise _failed(path, f"no event log at {path}") from None
    except AgentTtyError as err:
        raise _failed(path, err.message) from None
    with stream:
        lines = _lines(stream, path)
        first = next(lines, None)
        if first is None:
            raise _failed(path, f"{path} holds no header")
        try:
            header = EventLogHeader.from_json(first[1], f"{path}:{first[0]}")
        except RecordError as err:
            raise _failed(path, str(err)) from None

        def events() -> Iterator[LoggedEvent]:
            for number, line in lines:
                try:
                    yield LoggedEvent.from_json(line, f"{path}:{number}")
                except RecordError as err:
                    raise _failed(path, str(err)) from None

        yield header, events()


def output_bytes(event: Event) -> bytes:
    """The raw bytes the program wrote (the event log is the truth)."""
    return (event.data or "").encode("utf-8", "surrogateescape")


def shown_bytes(event: Event) -> bytes:
    """What every reader shows of an output event: the raw bytes less the host's `hide`."""
    return visible(output_bytes(event), getattr(event, "hide", None))


def replay(
    path: Path, backend: str | None = None, on_event: Callable[[Screen, Event], None] | None = None
) -> tuple[Screen, int]:
    """Feed every output and resize, in order, to a fresh screen that answers no query;
    `on_event` sees the screen as it stands after each event. The screen and the last seq."""
    with open_log(path) as (header, events):
        return replay_events(header, events, backend, on_event)


def replay_events(
    header: EventLogHeader,
    events: Iterable[Event],
    backend: str | None = None,
    on_event: Callable[[Screen, Event], None] | None = None,
) -> tuple[Screen, int]:
    _check_logged_size(header.cols, header.rows, "its header")
    screen = open_screen(header.cols, header.rows, None, backend)
    last = 0
    for event in events:
        if event.type == "output":
            screen.feed(shown_bytes(event))
        elif event.type == "checkpoint":
            screen.feed(output_bytes(event))  # the screen before this file began (ADR 0015)
        elif event.type == "resize" and event.cols and event.rows:
            _check_logged_size(event.cols, event.rows, f"its resize event {event.seq}")
            screen.resize(event.cols, event.rows)
        if on_event is not None:
            on_event(screen, event)
        last = event.seq
    return screen, last


def _check_logged_size(cols: int, rows: int, where: str) -> None:
    """A log is data: a size no host draws (an old log, a hostile one) would make the replay
    build that many cells. Refused before any screen is built."""
    from agent_tty.protocol.values import size_problem

    problem = size_problem(cols, rows)
    if problem is not None:
        raise AgentTtyError(
            ErrorCode.REPLAY_FAILED, f"the event log cannot be replayed: {where} says {cols}x{rows} ({problem})", cols=cols, rows=rows
        )
