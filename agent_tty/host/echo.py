"""The echo filter: finds where the shell echoes `run`'s completion postamble and hides it (ADR 0007).

`run` types `COMMAND; printf '\\033]7770;...' TOKEN $?` and Enter. The shell's line editor
(readline, ZLE, or the kernel's echo for dash) draws that line, wrapping it at the margin and
sometimes redrawing parts of it. This filter follows the raw cursor through the echo, cell by
cell, and hides (from the screen and from every reader, never from the event log) what lands
on the postamble's cells, so the screen shows the prompt, COMMAND and then the output, as if
only COMMAND had been typed.

It is fail-safe: it hides only after the echo of COMMAND and of the postamble's first
character were found where the layout puts them, only up to the first newline after that,
and it gives up (hides nothing more) on anything it cannot follow. It walks bytes in Python,
so it runs only from the `run` input to the end of that echo, within a byte budget.

The filtered cursor F and the raw cursor R agree on everything before the postamble's first
cell pS; while the echo goes on, every cell at or past pS maps to pS (M below). A byte is
kept when applying it to F gives M of what it does to R, and hidden otherwise.
"""

from __future__ import annotations

import unicodedata
from typing import Any

SEEK, COMMAND, HIDE, DONE, FAILED = range(5)
_MOVES = frozenset(b"ABCDEFGa`de")
_EDITS = frozenset(b"JKXP@LMST")
_ABSOLUTE = frozenset(b"Hfr")
HOLD_LIMIT = 4096
"""An escape sequence left unfinished at the end of a read is held for the next read, up to this."""


def width(char: str) -> int:
    if char < "\x7f":
        return 1
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def can_filter(line: str) -> bool:
    """A line whose echo we can follow: no control characters (a TAB completes, ^X notation)."""
    return not any(char < " " or char == "\x7f" for char in line)


def _escape_end(data: bytes, i: int) -> int:
    """The index after the escape sequence at data[i] (ESC), or -1 when it is unfinished."""
    n = len(data)
    if i + 1 >= n:
        return -1
    kind = data[i + 1]
    if kind == 0x5B:  # CSI
        j = i + 2
        while j < n:
            if 0x40 <= data[j] <= 0x7E:
                return j + 1
            j += 1
        return -1
    if kind in (0x5D, 0x50, 0x5E, 0x5F, 0x58):  # OSC, DCS, PM, APC, SOS
        j = i + 2
        while j < n:
            if data[j] == 0x07 and kind == 0x5D:
                return j + 1
            if data[j] == 0x1B:
                if j + 1 >= n:
                    return -1
                if data[j + 1] == 0x5C:
                    return j + 2
            j += 1
        return -1
    j = i + 1
    while j < n and 0x20 <= data[j] <= 0x2F:  # intermediates: ESC ( B, ESC # 8
        j += 1
    return j + 1 if j < n else -1


def _utf8_length(lead: int) -> int:
    if lead >= 0xF0:
        return 4
    if lead >= 0xE0:
        return 3
    if lead >= 0xC0:
        return 2
    return 1


class Cursor:
    __slots__ = ("row", "col", "pending")

    def __init__(self, row: int = 0, col: int = 0, pending: bool = False) -> None:
        self.row, self.col, self.pending = row, col, pending

    def copy(self) -> Cursor:
        return Cursor(self.row, self.col, self.pending)

    def same(self, other: Cursor) -> bool:
        return self.row == other.row and self.col == other.col and self.pending == other.pending


class EchoFilter:
    """One `run`: `line` is the last typed line without Enter; its characters from
    `hidden_from` on (the postamble) are hidden wherever the echo draws them."""

    def __init__(self, line: str, hidden_from: int) -> None:
        self.line = line
        self.hidden_from = hidden_from
        self.expected: dict[int, str] = {}
        """Cell position -> the character the echo puts there (laid out at the anchor)."""
        self.first = line[0]
        self.budget = 4 * len(line.encode("utf-8", "surrogateescape")) + 4096
        self.phase = SEEK
        self.cols = 0
        self.r = Cursor()
        self.f = Cursor()
        self.saved_r: Cursor | None = None
        self.saved_f: Cursor | None = None
        self.l0 = self.ps = self.pe = 0
        """Cells: where the echo starts, where the postamble starts, and just past its end."""
        self.blind = False
        self.last_hidden = False
        self.echo_end: int | None = None
        """Set when done: the offset just after the newline that ended the echo."""
        self.failed_at: int | None = None

    @property
    def finished(self) -> bool:
        return self.phase in (DONE, FAILED)

    # ------------------------------------------------------------------ the walk

    def scan(self, data: bytes, screen: Any, final: bool = False) -> tuple[int, list[int]]:
        """Follow `data`; returns how many bytes are decided and the hide ranges among them
        (start, end pairs). The undecided rest (an unfinished escape or character, unless
        `final`) must be offered again with the next read."""
        self.echo_end = self.failed_at = None
        hide: list[int] = []
        if self.phase in (DONE, FAILED):
            return len(data), hide
        cols = screen.size[0]
        if self.cols == 0:
            x, _y, _visible = screen.cursor()
            self.cols = cols
            self.r = Cursor(0, min(x, cols - 1), x >= cols)
        elif cols != self.cols:
            return self._fail(0, len(data), hide)  # resized mid-echo: the layout is unknown
        elif self.phase == SEEK:
            # Nothing hidden yet, so the screen's column is the raw one: it corrects what an
            # absolute move in the output before the echo kept us from following.
            # (A column that agrees keeps our pending wrap, which Ghostty does not report.)
            x = screen.cursor()[0]
            if min(x, cols - 1) != self.r.col:
                self.r.col, self.r.pending = min(x, cols - 1), x >= cols
        n = len(data)
        i = 0
        while i < n:
            if self.phase in (DONE, FAILED):
                return n, hide
            self.budget -= 1
            if self.budget < 0:
                return self._fail(i, n, hide)
            byte = data[i]
            if byte == 0x1B:
                j = _escape_end(data, i)
                if j < 0:
                    if not final and n - i < HOLD_LIMIT:
                        return i, hide
                    j = n
                self.budget -= j - i - 1
                if not self._escape(data, i, j):
                    self._hide(hide, i, j)
                i = j
            elif byte < 0x20 or byte == 0x7F:
                if not self._control(byte, data, i):
                    self._hide(hide, i, i + 1)
                i += 1
            else:
                size = 1 if byte < 0x80 else _utf8_length(byte)
                if i + size > n:
                    if not final:
                        return i, hide
                    size = n - i
                char = data[i : i + size].decode("utf-8", "replace")[:1] if size > 1 else chr(byte)
                keep = self._print(char, data, i, size)
                if keep is None:
                    return n, hide  # failed: this and the rest are shown
                if not keep:
                    self._hide(hide, i, i + size)
                i += size
        return n, hide

    def _fail(self, at: int, n: int, hide: list[int]) -> tuple[int, list[int]]:
        self.phase = FAILED
        self.failed_at = at
        return n, hide

    @staticmethod
    def _hide(hide: list[int], start: int, end: int) -> None:
        if hide and hide[-1] == start:
            hide[-1] = end
        else:
            hide += [start, end]

    def _pos(self, cursor: Cursor) -> int:
        return cursor.row * self.cols + cursor.col

    def _mapped(self, cursor: Cursor) -> int:
        """M: where the filtered cursor belongs when the raw one is at `cursor`."""
        return min(self._pos(cursor), self.ps)

    # ------------------------------------------------------------------ printing

    def _advance(self, cursor: Cursor, cells: int) -> int:
        """Print `cells` wide at `cursor` (autowrap, xterm's pending wrap); the cell's position."""
        if cells == 0:
            return self._pos(cursor) - (0 if cursor.pending or cursor.col == 0 else 1)
        if cursor.pending or (cells == 2 and cursor.col == self.cols - 1):
            cursor.row, cursor.col, cursor.pending = cursor.row + 1, 0, False
        at = self._pos(cursor)
        cursor.col += cells
        if cursor.col >= self.cols:
            cursor.col, cursor.pending = self.cols - 1, True
        return at

    def _print(self, char: str, data: bytes, i: int, size: int) -> bool | None:
        """Keep (True), hide (False) or give up (None) on a character printed at data[i]."""
        cells = width(char)
        before = self.r.copy()
        at = self._advance(self.r, cells)
        wrap_space = char == " " and (i + 1 >= len(data) or data[i + 1] == 0x0D)
        if self.phase == HIDE:
            if cells == 0:
                return not self.last_hidden
            if at < self.ps:
                keep = not self.blind and self.f.same(before)
                if keep:
                    self._advance(self.f, cells)
                self.last_hidden = not keep
                return keep
            if not self.blind and at < self.pe:
                expected = self.expected.get(at)
                if expected is not None and char != expected and not wrap_space:
                    self.phase, self.failed_at = FAILED, i
                    return None
            elif not self.blind and at >= self.pe + self.cols:
                self.phase, self.failed_at = FAILED, i
                return None
            self.last_hidden = True
            return False
        if cells == 0:
            return True
        if self.phase == SEEK:
            if char == self.first:
                self._anchor(before)
            return True
        # COMMAND: the echo of the command, kept as it is, checked cell by cell
        if at < self.l0:
            return True  # the prompt, drawn again
        expected = self.expected.get(at)
        if at < self.ps:
            if expected is not None and char != expected and not wrap_space:
                self.phase = SEEK
                if char == self.first:
                    self._anchor(before)
            return True
        if at < self.pe and char == expected:
            self.phase, self.f, self.blind, self.last_hidden = HIDE, before, False, True
            return False
        if wrap_space and at < self.pe:
            return True  # the command ends at the margin: the line editor forces the wrap
        self.phase = SEEK
        return True

    def _anchor(self, before: Cursor) -> None:
        """The echo starts here: lay the line out from this cursor as the terminal will
        (a wide character that does not fit in the last column goes to the next row)."""
        self.phase = COMMAND
        cursor = before.copy()
        self.expected = {}
        at = self.l0 = self._advance(cursor.copy(), width(self.first))
        for index, char in enumerate(self.line):
            cells = width(char)
            at = self._advance(cursor, cells)
            if index == self.hidden_from:
                self.ps = at
            if cells:
                self.expected[at] = char
        self.pe = at + max(1, width(self.line[-1]))

    # ------------------------------------------------------------------ controls and escapes

    def _control(self, byte: int, data: bytes, i: int) -> bool:
        r = self.r
        if byte == 0x0A:
            if self.phase == HIDE:
                r.row, r.pending = r.row + 1, False
                self.phase, self.echo_end = DONE, i + 1
                return True
            if self.phase == COMMAND:
                self.phase = SEEK  # the line ended before the postamble: not our echo
            r.row, r.pending = r.row + 1, False
            return True
        if byte == 0x0D:
            if self.phase == HIDE and (i + 1 >= len(data) or data[i + 1] == 0x0A):
                r.col, r.pending = 0, False
                self.f.col, self.f.pending = 0, False
                return True
            return self._move(lambda c: self._set(c, c.row, 0))
        if byte == 0x08:
            return self._move(lambda c: self._set(c, c.row, max(0, c.col - 1)))
        if byte == 0x09:
            return self._move(lambda c: self._set(c, c.row, min(self.cols - 1, (c.col // 8 + 1) * 8)))
        if byte in (0x0B, 0x0C):
            return self._move(lambda c: self._set(c, c.row + 1, c.col))
        return True  # BEL and other controls move nothing

    @staticmethod
    def _set(cursor: Cursor, row: int, col: int) -> None:
        cursor.row, cursor.col, cursor.pending = row, col, False

    def _move(self, apply) -> bool:  # type: ignore[no-untyped-def]
        apply(self.r)
        if self.phase != HIDE:
            return True
        if self.blind:
            return False
        moved = self.f.copy()
        apply(moved)
        if self._pos(moved) == self._mapped(self.r):
            self.f = moved
            return True
        return False

    def _escape(self, data: bytes, i: int, j: int) -> bool:
        if j - i < 2:
            return True
        kind = data[i + 1]
        if kind == 0x5B:
            final = data[j - 1]
            params = data[i + 2 : j - 1]
            if params[:1] in (b"?", b">", b"<", b"=") or data[j - 2 : j - 1] in (b" ", b"$", b'"', b"'"):
                return True  # private modes, cursor style and the like: nothing moves
            if final in _MOVES:
                count = _first_param(params)
                cols = self.cols
                moves = {
                    0x41: lambda c: self._set(c, c.row - count, c.col),
                    0x42: lambda c: self._set(c, c.row + count, c.col),
                    0x65: lambda c: self._set(c, c.row + count, c.col),
                    0x43: lambda c: self._set(c, c.row, min(cols - 1, c.col + count)),
                    0x61: lambda c: self._set(c, c.row, min(cols - 1, c.col + count)),
                    0x44: lambda c: self._set(c, c.row, max(0, c.col - count)),
                    0x45: lambda c: self._set(c, c.row + count, 0),
                    0x46: lambda c: self._set(c, c.row - count, 0),
                    0x47: lambda c: self._set(c, c.row, min(cols, count) - 1),
                    0x60: lambda c: self._set(c, c.row, min(cols, count) - 1),
                }
                if final == 0x64:  # VPA: an absolute row
                    return self._absolute()
                return self._move(moves[final])
            if final in _EDITS:
                if self.phase != HIDE:
                    return True
                return not self.blind and self._pos(self.r) < self.ps and self.f.same(self.r)
            if final in _ABSOLUTE:
                return self._absolute()
            if final == 0x73 and not params:  # SCOSC
                return self._save()
            if final == 0x75 and not params:  # SCORC
                return self._restore()
            return True
        if kind == 0x37:
            return self._save()
        if kind == 0x38:
            return self._restore()
        if kind == 0x44:  # IND
            return self._move(lambda c: self._set(c, c.row + 1, c.col))
        if kind == 0x45:  # NEL
            return self._move(lambda c: self._set(c, c.row + 1, 0))
        if kind == 0x4D:  # RI
            return self._move(lambda c: self._set(c, c.row - 1, c.col))
        if kind == 0x63:  # RIS
            return self._absolute()
        return True  # OSC, DCS, charsets, keypad modes: nothing moves

    def _absolute(self) -> bool:
        """A move we cannot follow (the screen may have scrolled since we began)."""
        if self.phase == HIDE:
            self.blind = True
            return False
        self.phase = SEEK
        return True

    def _save(self) -> bool:
        self.saved_r = self.r.copy()
        self.saved_f = self.f.copy()
        return True

    def _restore(self) -> bool:
        if self.saved_r is None:
            return self._absolute()
        self.r = self.saved_r.copy()
        if self.phase != HIDE:
            return True
        if not self.blind and self.saved_f is not None and self._pos(self.saved_f) == self._mapped(self.r):
            self.f = self.saved_f.copy()
            return True
        self.blind = True
        return False


def _first_param(params: bytes) -> int:
    head = params.split(b";", 1)[0].split(b":", 1)[0]
    return int(head) if head.isdigit() and int(head) > 0 else 1
