"""The pyte backend: pure Python and portable (macOS, Windows), about 1,000x slower than Ghostty.

pyte has no alternate screen and answers only DSR and primary DA; this module adds the
alternate screen (DECSET 47/1047/1049) and the replies to DA2 and the OSC 10/11 colour queries
that programs wait for.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pyte
from pyte import modes as mo

from agent_tty.terminal.screen import DEFAULT_BG, DEFAULT_FG, SCROLLBACK_LINES, Reply

_ALT_MODES = (47, 1047, 1049)
_DECCKM = 1 << 5
_BRACKETED_PASTE = 2004 << 5
_QUERIES = re.compile(rb"\x1b\[>0?c|\x1b\](1[01]);\?(?:\x07|\x1b\\)")
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
        super().__init__(cols, rows, history=SCROLLBACK_LINES)
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
        if self.in_alt:  # the alternate screen keeps no scrollback
            pyte.Screen.index(self)
        else:
            super().index()


class PyteScreen:
    backend = "pyte"

    def __init__(self, cols: int, rows: int, on_reply: Reply | None) -> None:
        self._screen = _AltScreen(cols, rows)
        self._stream = pyte.ByteStream(self._screen)
        self._on_reply = on_reply
        self._tail = b""

    def feed(self, data: bytes) -> None:
        self._stream.feed(data)
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
            if match.group(1) is None:
                self._on_reply(b"\x1b[>1;10;0c")
            else:
                rgb = DEFAULT_FG if match.group(1) == b"10" else DEFAULT_BG
                self._on_reply(_rgb_reply(match.group(1), rgb))
        self._tail = window[-32:]

    def resize(self, cols: int, rows: int) -> None:
        self._screen.resize(rows, cols)

    @property
    def size(self) -> tuple[int, int]:
        return self._screen.columns, self._screen.lines

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self._screen.display]

    def scrollback(self) -> list[str]:
        if self._screen.in_alt:
            return []  # as Ghostty: the alternate screen has no scrollback of its own
        cols = self._screen.columns
        return ["".join(line[x].data for x in range(cols)).rstrip() for line in self._screen.history.top]

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
