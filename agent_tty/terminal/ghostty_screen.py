"""The pyghostty backend: Ghostty's VT engine (libghostty-vt), fast and complete."""

from __future__ import annotations

from typing import Any

import pyghostty

from agent_tty.terminal.screen import DEFAULT_BG, DEFAULT_FG, SCROLLBACK_LINES, Reply


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
        self._term = pyghostty.Terminal(cols, rows, scrollback=SCROLLBACK_LINES, fg=DEFAULT_FG, bg=DEFAULT_BG)
        if on_reply is not None:
            self._term.on_reply(on_reply)

    def feed(self, data: bytes) -> None:
        self._term.feed(data)

    def resize(self, cols: int, rows: int) -> None:
        self._term.resize(cols, rows)

    @property
    def size(self) -> tuple[int, int]:
        return self._term.size

    def lines(self) -> list[str]:
        _cols, rows = self._term.size
        lines = [line.rstrip() for line in self._term.text().split("\n")][:rows]
        return lines + [""] * (rows - len(lines))

    def scrollback(self) -> list[str]:
        if self.alternate():
            return []
        history = self._term.get("scrollback_rows", "size_t")
        if not history:
            return []
        cols, _rows = self._term.size
        sel = pyghostty.core.init_sized("GhosttySelection")
        sel.start = self._term.ref(0, 0, "history")[0]
        sel.end = self._term.ref(cols - 1, history - 1, "history")[0]
        return [line.rstrip() for line in self._term._format_sel(sel).split("\n")]

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
        cols, rows = self._term.size
        grid = []
        for y, line in enumerate(self.lines()):
            row = []
            chars = _columns(line, cols)
            for x in range(cols):
                style = self._term.style(x, y)
                row.append(
                    {
                        "char": chars[x],
                        "fg": _color(style["fg"]),
                        "bg": _color(style["bg"]),
                        "bold": style["bold"],
                        "italic": style["italic"],
                        "underline": bool(style["underline"]),
                        "inverse": style["inverse"],
                        "faint": style["faint"],
                        "strikethrough": style["strikethrough"],
                    }
                )
            grid.append(row)
        return grid


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
