"""A session's screen rebuilt from its event log and kept up to date as the host appends to it.

It reads events.jsonl the way replay does (storage's open_stream: O_NOFOLLOW, a regular file of
ours; a line at a time, a cut-short last line waits for its end) and never writes or connects
to anything. A rotation (ADR 0015) renames a new file over events.jsonl that starts with a
checkpoint of the screen: the old file is read to its end, then the screen is rebuilt from the
new one, which is what an ended session's snapshot does.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent_tty.protocol.errors import AgentTtyError
from agent_tty.storage.records import EventLogHeader
from agent_tty.storage.schema import RecordError
from agent_tty.terminal.replay import LINE_MAX, LoggedEvent, output_bytes, shown_bytes
from agent_tty.terminal.screen import Screen, open_screen

READ_CHUNK = 1 << 20
"""Bytes read a turn: a burst of output is drawn in steps, and keys stay answered meanwhile."""


class Mirror:
    """The screen of one session's log. `poll()` reads what was appended since the last call."""

    def __init__(self, events: Path, backend: str | None = None) -> None:
        self.path = events
        self.backend = backend
        self.screen: Screen | None = None
        self.seq = 0
        self.exit: tuple[int | None, int | None] | None = None
        """(exit code, exit signal) once the log holds the program's exit."""
        self.problem: str | None = None
        """Why the log cannot be followed (gone, unreadable, a bad line); the screen stays as it was."""
        self._stream = None
        self._identity: tuple[int, int] | None = None
        self._pending = b""
        self._header_read = False

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def poll(self, budget: int = READ_CHUNK) -> bool:
        """Read up to `budget` new bytes of the log; whether the screen (or the state) changed."""
        if self.problem is not None and self._stream is None:
            return False
        if self._stream is None and not self._open():
            return True
        changed = False
        try:
            data = self._stream.read(budget)  # type: ignore[union-attr]
        except OSError as err:
            return self._fail(f"cannot read {self.path}: {err.strerror}")
        if data:
            changed = self._take(data)
        elif self._rotated():
            self.close()
            self._reset()
            changed = self._open() or True
        return changed

    def caught_up(self) -> bool:
        """Whether the last poll read to the end of what is on disk (approximately: by size)."""
        if self._stream is None:
            return True
        try:
            return self._stream.tell() >= os.fstat(self._stream.fileno()).st_size
        except (OSError, ValueError):
            return True

    # ------------------------------------------------------------ internals

    def _reset(self) -> None:
        self.screen, self._pending, self._header_read = None, b"", False

    def _open(self) -> bool:
        from agent_tty.storage.files import open_stream

        try:
            stream = open_stream(self.path)
        except FileNotFoundError:
            return self._fail("its event log is gone (the session was removed)")
        except AgentTtyError as err:
            return self._fail(err.message)
        info = os.fstat(stream.fileno())
        self._stream, self._identity = stream, (info.st_dev, info.st_ino)
        self.problem = None
        return True

    def _rotated(self) -> bool:
        """A different file is now events.jsonl (the host rotated the log). Our open file keeps
        its inode from being freed and reused, so an equal number is the same file."""
        try:
            info = os.lstat(self.path)
        except OSError:
            return False  # gone: keep the last screen; the list shows the session going
        return (info.st_dev, info.st_ino) != self._identity

    def _fail(self, message: str) -> bool:
        self.close()
        self.problem = message
        return False

    def _take(self, data: bytes) -> bool:
        lines = (self._pending + data).split(b"\n")
        self._pending = lines.pop()
        if len(self._pending) > LINE_MAX:
            return self._fail(f"{self.path}: a line longer than {LINE_MAX} bytes")
        for line in lines:
            if not line.strip():
                continue
            try:
                self._apply(line)
            except (RecordError, AgentTtyError) as err:
                return self._fail(str(getattr(err, "message", err)))
        return True

    def _apply(self, line: bytes) -> None:
        if not self._header_read:
            header = EventLogHeader.from_json(line, f"{self.path}:1")
            self._header_read = True
            self.screen = open_screen(*_drawable(header.cols, header.rows), None, self.backend)
            return
        event = LoggedEvent.from_json(line, str(self.path))
        screen = self.screen
        assert screen is not None
        if event.type == "output":
            screen.feed(shown_bytes(event))
        elif event.type == "checkpoint":
            screen.feed(output_bytes(event))
        elif event.type == "resize" and event.cols and event.rows:
            screen.resize(*_drawable(event.cols, event.rows))
        elif event.type == "exit":
            self.exit = (event.exit_code, event.exit_signal)
        self.seq = event.seq


def _drawable(cols: int, rows: int) -> tuple[int, int]:
    """A size no host draws (a hostile log) is refused as replay refuses it."""
    from agent_tty.protocol.values import size_problem

    problem = size_problem(cols, rows)
    if problem is not None:
        raise RecordError(f"the event log says {cols}x{rows} ({problem})")
    return cols, rows
