"""The pyghostty backend: Ghostty's VT engine (libghostty-vt), fast and complete."""

from __future__ import annotations

from typing import Any

import pyghostty

from agent_tty.terminal.screen import DEFAULT_BG, DEFAULT_FG, SCROLLBACK_LINES, Reply

PAGE_BYTES = 400 << 10
"""One Ghostty page, at any width (page.zig std_capacity: 215 x 215 cells of 8 bytes, a row
header the size of a cell per row, and tables for styles, graphemes and hyperlinks)."""
PAGE_CELLS = 46_500
"""A page holds about PAGE_CELLS // (cols + 1) rows: 577 at 80 columns, 4,262 at 10."""
DENSE = 2.5
"""How many times the pages of plain text the scrollback may take: a page of many styles,
graphemes or hyperlinks is bigger for the same rows (an OSC 8 link on every line: 1.8 times;
emoji with modifiers and combining marks on every line: 2.3 times)."""
SCROLLBACK_BYTES = 64 << 20
"""The most any width gets: 10,000 rows of plain text fit up to about 750 columns."""


def _budget(cols: int, rows: int) -> int:
    """Ghostty's byte limit: the pages that SCROLLBACK_LINES rows and the screen take at this
    size, DENSE times over, of which `scrollback` shows exactly the last SCROLLBACK_LINES rows,
    as pyte keeps them. Past the limit Ghostty drops the oldest page and reuses it for the next
    rows. Its line limit stays unset: pruning by lines fed a flood of short lines 3 times slower
    at 80 columns, 5 times at 500."""
    pages = -(-(SCROLLBACK_LINES + rows) // max(1, PAGE_CELLS // (cols + 1))) + 2
    return min(SCROLLBACK_BYTES, int(DENSE * pages) * PAGE_BYTES)


def _color(value: Any) -> int | str | None:
    if value is None:
        return None
    kind, data = value
    if kind == "palette":
        return int(data)
    r, g, b = data
    return f"#{r:02x}{g:02x}{b:02x}"


class GhosttyScreen:
    backend = "ghostty"

    def __init__(self, cols: int, rows: int, on_reply: Reply | None) -> None:
        # Default colours give OSC 10/11 queries an answer (programs hang on them otherwise).
        self._term = pyghostty.Terminal(cols, rows, fg=DEFAULT_FG, bg=DEFAULT_BG)
        # A new terminal keeps 10,000 bytes of scrollback, one page: some 800 rows at 80 columns.
        self._set(pyghostty.lib.GHOSTTY_TERMINAL_OPT_SCROLLBACK_MAX_LINES, None)
        self._set(pyghostty.lib.GHOSTTY_TERMINAL_OPT_SCROLLBACK_MAX_BYTES, _budget(cols, rows))
        if on_reply is not None:
            self._term.on_reply(on_reply)
        self._scrollback: list[str] | None = None
        """The last `scrollback`, until the next feed or resize: a pending wait reads it every 20 ms."""
        self._text = pyghostty.ffi.new("uint8_t[]", 1 << 16)

    def feed(self, data: bytes) -> None:
        self._term.feed(data)
        self._scrollback = None

    def _set(self, option: int, value: int | None) -> None:
        """A size_t option; None removes the limit it sets."""
        ffi = pyghostty.ffi
        result = pyghostty.lib.ghostty_terminal_set(self._term._t[0], option, ffi.NULL if value is None else ffi.new("size_t*", value))
        if result:
            raise pyghostty.GhosttyError(f"ghostty_terminal_set {option} failed: {result}")

    def resize(self, cols: int, rows: int) -> None:
        # A larger limit before the reflow, so that no row is dropped meanwhile; a smaller one after.
        budget = _budget(cols, rows)
        if budget > _budget(*self._term.size):
            self._set(pyghostty.lib.GHOSTTY_TERMINAL_OPT_SCROLLBACK_MAX_BYTES, budget)
        self._term.resize(cols, rows)
        self._set(pyghostty.lib.GHOSTTY_TERMINAL_OPT_SCROLLBACK_MAX_BYTES, budget)
        self._scrollback = None

    @property
    def size(self) -> tuple[int, int]:
        return self._term.size

    def lines(self) -> list[str]:
        _cols, rows = self._term.size
        lines = [line.rstrip() for line in self._term.text().split("\n")][:rows]
        return lines + [""] * (rows - len(lines))

    def scrollback(self) -> list[str]:
        if self._scrollback is None:
            self._scrollback = self._read_scrollback()
        return list(self._scrollback)

    def _read_scrollback(self) -> list[str]:
        if self.alternate():
            return []
        history = self._term.get("scrollback_rows", "size_t")
        if not history:
            return []
        cols, _rows = self._term.size
        sel = pyghostty.core.init_sized("GhosttySelection")
        sel.start = self._term.ref(0, max(0, history - SCROLLBACK_LINES), "history")[0]
        sel.end = self._term.ref(cols - 1, history - 1, "history")[0]
        return [line.rstrip() for line in self._format(sel).split("\n")]

    def _format(self, sel: Any) -> str:
        """The selection as plain text, one row a line, trimmed: formatted once into a buffer
        kept for the next call (pyghostty's own formats twice, to learn the size first)."""
        lib, ffi = pyghostty.lib, pyghostty.ffi
        opts = pyghostty.core.init_sized("GhosttyTerminalSelectionFormatOptions")
        opts.emit, opts.unwrap, opts.trim, opts.selection = lib.GHOSTTY_FORMATTER_FORMAT_PLAIN, False, True, sel
        written = ffi.new("size_t*")
        result = lib.ghostty_terminal_selection_format_buf(self._term._t[0], opts[0], self._text, len(self._text), written)
        if result == lib.GHOSTTY_OUT_OF_SPACE:
            self._text = ffi.new("uint8_t[]", written[0])
            result = lib.ghostty_terminal_selection_format_buf(self._term._t[0], opts[0], self._text, len(self._text), written)
        if result:
            raise pyghostty.GhosttyError(f"ghostty_terminal_selection_format_buf failed: {result}")
        return ffi.buffer(self._text, written[0])[:].decode()

    def cursor(self) -> tuple[int, int, bool]:
        x, y = self._term.cursor
        return x, y, bool(self._term.get("cursor_visible", "bool"))

    def alternate(self) -> bool:
        return self._term.get("active_screen", "int") == 1

    def title(self) -> str:
        value = self._term.get("title", "GhosttyString")
        if not value.len:
            return ""
        return bytes(pyghostty.ffi.buffer(value.ptr, value.len)).decode("utf-8", "replace")

    def app_cursor(self) -> bool:
        return self._term.mode(1)

    def bracketed_paste(self) -> bool:
        return self._term.mode(2004)

    def cells(self) -> list[list[dict[str, Any]]]:
        """pyghostty's `style(x, y)` costs ~60 us a cell (a new ref and struct each time): 15 s
        for 500x500. One ref per row, moved along the row (a row lies in one page), one style
        struct reused, and one conversion per distinct style make it about 1 us."""
        lib, ffi = pyghostty.lib, pyghostty.ffi
        cols, _rows = self._term.size
        style = self._term_style_struct()
        styles: dict[bytes, dict[str, Any]] = {}
        grid = []
        for y, line in enumerate(self.lines()):
            row = []
            chars = _columns(line, cols)
            ref = self._term.ref(0, y)
            for x in range(cols):
                ref.x = x
                result = lib.ghostty_grid_ref_style(ref, style)
                if result:
                    raise pyghostty.GhosttyError(f"ghostty_grid_ref_style {x},{y} failed: {result}")
                key = bytes(ffi.buffer(style))
                attrs = styles.get(key)
                if attrs is None:
                    attrs = styles[key] = _attributes(style)
                row.append({"char": chars[x], **attrs})
            grid.append(row)
        return grid

    def _term_style_struct(self) -> Any:
        return pyghostty.core.init_sized("GhosttyStyle")


def _attributes(style: Any) -> dict[str, Any]:
    """A cell's colours and attributes from a GhosttyStyle (as pyghostty's `style` reads it)."""
    lib = pyghostty.lib

    def color(value: Any) -> int | str | None:
        if value.tag == lib.GHOSTTY_STYLE_COLOR_PALETTE:
            return int(value.value.palette)
        if value.tag == lib.GHOSTTY_STYLE_COLOR_RGB:
            rgb = value.value.rgb
            return f"#{rgb.r:02x}{rgb.g:02x}{rgb.b:02x}"
        return None

    return {
        "fg": color(style.fg_color),
        "bg": color(style.bg_color),
        "bold": bool(style.bold),
        "italic": bool(style.italic),
        "underline": bool(style.underline),
        "inverse": bool(style.inverse),
        "faint": bool(style.faint),
        "strikethrough": bool(style.strikethrough),
    }


def _columns(line: str, cols: int) -> list[str]:
    """Map a row's text onto cells: a wide character takes two cells, the second empty."""
    import unicodedata

    cells: list[str] = []
    for char in line:
        if unicodedata.combining(char) and cells:
            cells[-1] += char
            continue
        cells.append(char)
        if unicodedata.east_asian_width(char) in ("W", "F"):
            cells.append("")
    cells = cells[:cols]
    return cells + [" "] * (cols - len(cells))
