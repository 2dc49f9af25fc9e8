"""Rebuild a session's screen from its event log, for sessions whose host has ended."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.storage.records import Event, EventLogHeader
from agent_tty.storage.schema import RecordError
from agent_tty.terminal.output import visible
from agent_tty.terminal.screen import Screen, open_screen


@dataclass(frozen=True)
class LoggedEvent(Event):
    """An event as the host writes it now: output may say what readers do not show (ADR 0007).
    Older agent-tty versions ignore these fields and show the raw bytes."""

    hide: tuple[int, ...] | None = None
    """Output: start, end pairs of byte offsets in `data` that no reader shows (the echo of
    `run`'s completion postamble)."""
    echo_end: int | None = None
    """Output: the byte offset in `data` where the echo of the last input ended."""


def read_log(path: Path) -> tuple[EventLogHeader, list[LoggedEvent]]:
    """The header and the events. A last line cut short (a host killed mid-write) is dropped;
    any other bad line is REPLAY_FAILED naming the line."""
    from agent_tty.storage.files import read_bytes

    try:
        raw = read_bytes(path)  # a regular file of ours, never through a link
    except FileNotFoundError:
        raise AgentTtyError(ErrorCode.REPLAY_FAILED, f"no event log at {path}", path=str(path)) from None
    except AgentTtyError as err:
        raise AgentTtyError(ErrorCode.REPLAY_FAILED, err.message, path=str(path)) from None
    lines = raw.split(b"\n")
    complete = raw.endswith(b"\n")
    if not complete:
        lines = lines[:-1]  # the partial last line
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise AgentTtyError(ErrorCode.REPLAY_FAILED, f"{path} holds no header", path=str(path))
    try:
        header = EventLogHeader.from_json(lines[0], f"{path}:1")
        events = [LoggedEvent.from_json(line, f"{path}:{number}") for number, line in enumerate(lines[1:], start=2)]
    except RecordError as err:
        raise AgentTtyError(ErrorCode.REPLAY_FAILED, str(err), path=str(path)) from None
    return header, events


def output_bytes(event: Event) -> bytes:
    """The raw bytes the program wrote (the event log is the truth)."""
    return (event.data or "").encode("utf-8", "surrogateescape")


def shown_bytes(event: Event) -> bytes:
    """What every reader shows of an output event: the raw bytes less the host's `hide`."""
    return visible(output_bytes(event), getattr(event, "hide", None))


def replay(
    path: Path, backend: str | None = None, on_event: Callable[[Screen, Event], None] | None = None
) -> tuple[Screen, int, list[Event]]:
    """Feed every output and resize, in order, to a fresh screen that answers no query;
    `on_event` sees the screen as it stands after each event."""
    header, events = read_log(path)
    return replay_events(header, events, backend, on_event)


def replay_events(
    header: EventLogHeader,
    events: list[Event],
    backend: str | None = None,
    on_event: Callable[[Screen, Event], None] | None = None,
) -> tuple[Screen, int, list[Event]]:
    _check_logged_size(header.cols, header.rows, "its header")
    screen = open_screen(header.cols, header.rows, None, backend)
    last = 0
    for event in events:
        if event.type == "output":
            screen.feed(shown_bytes(event))
        elif event.type == "resize" and event.cols and event.rows:
            _check_logged_size(event.cols, event.rows, f"its resize event {event.seq}")
            screen.resize(event.cols, event.rows)
        if on_event is not None:
            on_event(screen, event)
        last = event.seq
    return screen, last, events


def _check_logged_size(cols: int, rows: int, where: str) -> None:
    """A log is data: a size no host draws (an old log, a hostile one) would make the replay
    build that many cells. Refused before any screen is built."""
    from agent_tty.protocol.values import size_problem

    problem = size_problem(cols, rows)
    if problem is not None:
        raise AgentTtyError(
            ErrorCode.REPLAY_FAILED, f"the event log cannot be replayed: {where} says {cols}x{rows} ({problem})", cols=cols, rows=rows
        )
