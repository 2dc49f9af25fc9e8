"""The pyte backend: pure Python and portable (macOS, Windows), about 1,000x slower than Ghostty.

pyte has no alternate screen and answers only DSR and primary DA; this module adds the
alternate screen (DECSET 47/1047/1049) and the replies to DA2 and the OSC 10/11 colour queries
that programs wait for.

Any byte stream is data a program chose: pyte raises on some (222 of 2,217 CSI sequences, e.g.
`CSI 1;2 A`, `CSI ? 4 m`, `CSI 6 J`), and one exception must not end a session. Its handlers are
called through `_Guarded`, which drops what a handler cannot take, as a terminal ignores a
sequence it does not know. pyte also reads `CSI > … c` (DA2) as primary DA and `CSI > 4;1 m`
(modifyOtherKeys) as SGR: sequences with a `<`, `=` or `>` prefix are taken out of the stream
before pyte sees them.
"""

from __future__ import annotations

import copy
import itertools
import re
from typing import Any

import pyte
from pyte import modes as mo

from agent_tty.terminal.screen import DEFAULT_BG, DEFAULT_FG, SCROLLBACK_LINES, Reply

_RESERVE = 1_000
"""Rows kept beyond the SCROLLBACK_LINES that `scrollback` shows, as Ghostty keeps more than it
shows: when a taller screen pulls rows back from the scrollback, it still shows as many."""
_ALT_MODES = (47, 1047, 1049)
_DECCKM = 1 << 5
_BRACKETED_PASTE = 2004 << 5
_QUERIES = re.compile(rb"\x1b\](1[01]);\?(?:\x07|\x1b\\)")
_PREFIXED = re.compile(rb"\x1b\[([<=>])[\x30-\x3f]*[\x20-\x2f]*([\x40-\x7e])")
"""A CSI with a private prefix pyte does not parse; `CSI > [0] c` (DA2) is answered."""
_PREFIXED_OPEN = re.compile(rb"\x1b(?:\[(?:[<=>][\x30-\x3f]*[\x20-\x2f]*)?)?\Z")
"""The start of one at the end of a chunk: held until the next chunk says what it is."""
_DA2_REPLY = b"\x1b[>1;10;0c"
_NAMED = {
    "black": 0, "red": 1, "green": 2, "brown": 3, "yellow": 3, "blue": 4, "magenta": 5, "cyan": 6, "white": 7,
    "brightblack": 8, "brightred": 9, "brightgreen": 10, "brightbrown": 11, "brightyellow": 11,
    "brightblue": 12, "brightmagenta": 13, "brightcyan": 14, "brightwhite": 15,
}


def _color(value: str) -> int | str | None:
    if value == "default":
        return None
    if value in _NAMED:
        return _NAMED[value]
    if re.fullmatch(r"[0-9a-fA-F]{6}", value):
        return "#" + value.lower()
    return None


def _rgb_reply(code: bytes, rgb: tuple[int, int, int]) -> bytes:
    r, g, b = (f"{c:02x}{c:02x}" for c in rgb)
    return b"\x1b]" + code + f";rgb:{r}/{g}/{b}".encode() + b"\x07"


class _AltScreen(pyte.HistoryScreen):
    def __init__(self, cols: int, rows: int) -> None:
        super().__init__(cols, rows, history=SCROLLBACK_LINES + _RESERVE)
        self.in_alt = False
        self._saved: tuple[Any, Any] | None = None
        self.replies: list[str] = []

    def write_process_input(self, data: str) -> None:
        self.replies.append(data)

    def _switch(self, modes: tuple[int, ...], on: bool) -> tuple[int, ...]:
        if on and not self.in_alt:
            self._saved = (copy.deepcopy(self.buffer), copy.deepcopy(self.cursor))
            self.in_alt = True
            self.buffer.clear()
            self.dirty.update(range(self.lines))
        elif not on and self.in_alt:
            self.in_alt = False
            assert self._saved is not None
            buffer, cursor = self._saved
            self.buffer.clear()
            self.buffer.update(buffer)
            if 1049 in modes:
                self.cursor = cursor
            self.dirty.update(range(self.lines))
        return tuple(m for m in modes if m not in _ALT_MODES)

    def set_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private") and any(m in _ALT_MODES for m in modes):
            modes = self._switch(modes, True)
            if not modes:
                return
        super().set_mode(*modes, **kwargs)

    def reset_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private") and any(m in _ALT_MODES for m in modes):
            modes = self._switch(modes, False)
            if not modes:
                return
        super().reset_mode(*modes, **kwargs)

    def index(self) -> None:
        # As Ghostty: the alternate screen keeps no scrollback, nor does a scroll region below
        # the top row (pyte would keep its top line).
        if self.in_alt or (self.margins is not None and self.margins.top != 0):
            pyte.Screen.index(self)
        else:
            super().index()

    def resize(self, lines: int | None = None, columns: int | None = None) -> None:
        lines, columns = lines or self.lines, columns or self.columns
        if lines != self.lines:
            self._resize_rows(lines)
        super().resize(lines, columns)

    def _resize_rows(self, lines: int) -> None:
        """Rows as Ghostty resizes them (pyte would blank the screen and lose the cursor): fewer
        rows drop blank rows below the cursor, then move the top rows into the scrollback; more
        rows with the cursor on the last one pull rows back from the scrollback."""
        rows = [self.buffer[y] for y in range(self.lines)]
        y = self.cursor.y
        history = self.history.top
        if lines < self.lines:
            extra = self.lines - lines
            while extra and len(rows) - 1 > y and not any(char.data.strip() for char in rows[-1].values()):
                rows.pop()
                extra -= 1
            if not self.in_alt:
                history.extend(rows[:extra])
            rows, y = rows[extra:], y - extra
        elif y >= self.lines - 1 and not self.in_alt:
            pulled = [history.pop() for _ in range(min(lines - self.lines, len(history)))]
            rows, y = pulled[::-1] + rows, y + len(pulled)
        self.buffer.clear()
        self.buffer.update(enumerate(rows))
        self.cursor.y = max(0, y)
        self.lines = lines
        self.set_margins()
        self.dirty.update(range(lines))


class _Guarded:
    """The screen as the stream's listener: each handler the stream looks up is wrapped so that
    what it raises is dropped. A handler given more parameters than it takes (`CSI 1;2 A`) is
    called again with the first, as xterm reads it."""

    def __init__(self, screen: _AltScreen) -> None:
        self._screen = screen

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._screen, name)
        if not callable(attr):
            return attr

        def guarded(*args: Any, **kwargs: Any) -> None:
            try:
                attr(*args, **kwargs)
            except Exception:  # noqa: BLE001 - pyte's handler on input it cannot take: try its simpler form
                if kwargs or len(args) < 2:
                    return
                try:
                    attr(args[0])
                except Exception:  # noqa: BLE001 - pyte cannot take this sequence: it is dropped
                    return

        return guarded


class PyteScreen:
    backend = "pyte"

    def __init__(self, cols: int, rows: int, on_reply: Reply | None) -> None:
        self._screen = _AltScreen(cols, rows)
        self._stream = pyte.ByteStream(_Guarded(self._screen))
        self._on_reply = on_reply
        self._tail = b""
        self._held = b""
        self._rows: dict[int, tuple[Any, str]] = {}
        """Scrollback rows as text by id(row): a row that scrolled off is not written again."""

    def feed(self, data: bytes) -> None:
        data, self._held = self._held + data, b""
        opened = _PREFIXED_OPEN.search(data)
        if opened is not None:
            data, self._held = data[: opened.start()], data[opened.start() :]
        start = 0
        for match in _PREFIXED.finditer(data):
            self._feed_pyte(data[start : match.start()])
            start = match.end()
            if match.group(1) == b">" and match.group(2) == b"c" and self._on_reply is not None:
                self._on_reply(_DA2_REPLY)
        self._feed_pyte(data[start:])

    def _feed_pyte(self, data: bytes) -> None:
        if not data:
            return
        try:
            self._stream.feed(data)
        except Exception:  # noqa: BLE001 - pyte's parser on any input
            # Not a handler (those are guarded): the parser itself. It starts again.
            self._stream._initialize_parser()
        if self._on_reply is None:
            self._screen.replies.clear()
            return
        for reply in self._screen.replies:
            self._on_reply(reply.encode())
        self._screen.replies.clear()
        window = self._tail + data
        for match in _QUERIES.finditer(window):
            if match.end() <= len(self._tail):
                continue  # answered with the previous chunk
            rgb = DEFAULT_FG if match.group(1) == b"10" else DEFAULT_BG
            self._on_reply(_rgb_reply(match.group(1), rgb))
        self._tail = window[-32:]

    def resize(self, cols: int, rows: int) -> None:
        self._screen.resize(rows, cols)
        self._rows = {}  # rows came back from the scrollback, or the width changed

    @property
    def size(self) -> tuple[int, int]:
        return self._screen.columns, self._screen.lines

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self._screen.display]

    def scrollback(self) -> list[str]:
        if self._screen.in_alt:
            return []  # as Ghostty: the alternate screen has no scrollback of its own
        cols, known, rows, texts = self._screen.columns, self._rows, {}, []
        history = self._screen.history.top
        for line in itertools.islice(history, max(0, len(history) - SCROLLBACK_LINES), None):
            row = known.get(id(line))
            if row is None or row[0] is not line:
                width = min(cols, max(line, default=-1) + 1)
                row = (line, "".join(line[x].data for x in range(width)).rstrip())
            rows[id(line)] = row
            texts.append(row[1])
        self._rows = rows
        return texts

    def cursor(self) -> tuple[int, int, bool]:
        cursor = self._screen.cursor
        return cursor.x, cursor.y, mo.DECTCEM in self._screen.mode

    def alternate(self) -> bool:
        return self._screen.in_alt

    def title(self) -> str:
        return self._screen.title

    def app_cursor(self) -> bool:
        return _DECCKM in self._screen.mode

    def bracketed_paste(self) -> bool:
        return _BRACKETED_PASTE in self._screen.mode

    def cells(self) -> list[list[dict[str, Any]]]:
        cols = self._screen.columns
        grid = []
        for y in range(self._screen.lines):
            line = self._screen.buffer[y]
            row = []
            for x in range(cols):
                char = line[x]
                row.append(
                    {
                        "char": char.data,
                        "fg": _color(char.fg),
                        "bg": _color(char.bg),
                        "bold": char.bold,
                        "italic": char.italics,
                        "underline": char.underscore,
                        "inverse": char.reverse,
                        "faint": False,
                        "strikethrough": char.strikethrough,
                    }
                )
            grid.append(row)
        return grid
