"""A screen as a VT byte stream: fed to a fresh screen of the same size, it rebuilds it.

The event log starts each new file with one (ADR 0015). The scrollback is plain text: a
structured read of 10,000 rows costs about 1 us a cell on Ghostty (a second at 80 columns,
more at 200), too long for the host to stop; the visible rows keep their colours and
attributes. Then the cursor, the title and the modes the Screen interface exposes."""

from __future__ import annotations

import re
from typing import Any

from agent_tty.terminal.screen import Screen

_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""Text from a screen holds none; a title might. None may reach the stream as a command."""


def checkpoint_bytes(screen: Screen) -> bytes:
    _cols, rows = screen.size
    parts: list[str] = []
    if screen.alternate():
        # The primary screen under it is not exposed: the replay's primary starts blank.
        parts.append("\x1b[?1049h\x1b[H")
    else:
        for line in screen.scrollback():
            parts.append(_CONTROLS.sub(" ", line) + "\r\n")
    grid = screen.cells()
    for y, row in enumerate(grid[:rows]):
        parts.append(_row(row))
        parts.append("\x1b[0m" + ("\r\n" if y < rows - 1 else ""))
    x, y, visible = screen.cursor()
    parts.append(f"\x1b[{y + 1};{x + 1}H")
    if not visible:
        parts.append("\x1b[?25l")
    if screen.app_cursor():
        parts.append("\x1b[?1h")
    if screen.bracketed_paste():
        parts.append("\x1b[?2004h")
    title = screen.title()
    if title:
        parts.append("\x1b]2;" + _CONTROLS.sub(" ", title) + "\x07")
    return "".join(parts).encode("utf-8", "surrogateescape")


_PLAIN: tuple[Any, ...] = (None, None, False, False, False, False, False, False)


def _key(cell: dict[str, Any]) -> tuple[Any, ...]:
    return (
        cell.get("fg"),
        cell.get("bg"),
        bool(cell.get("bold")),
        bool(cell.get("faint")),
        bool(cell.get("italic")),
        bool(cell.get("underline")),
        bool(cell.get("inverse")),
        bool(cell.get("strikethrough")),
    )


def _row(row: list[dict[str, Any]]) -> str:
    """One visible row with its attributes, less its trailing plain blanks."""
    end = len(row)
    while end and row[end - 1].get("char") in (" ", "", None) and _key(row[end - 1]) == _PLAIN:
        end -= 1
    out: list[str] = []
    pen = _PLAIN
    for cell in row[:end]:
        char = cell.get("char") or ""
        if not char:
            continue  # the second half of a wide character
        key = _key(cell)
        if key != pen:
            out.append(_sgr(key))
            pen = key
        out.append(_CONTROLS.sub(" ", char))
    return "".join(out)


def _sgr(key: tuple[Any, ...]) -> str:
    fg, bg, *flags = key
    codes = ["0"]
    codes += [code for code, on in zip(("1", "2", "3", "4", "7", "9"), flags) if on]
    if fg is not None:
        codes.append(_color(fg, 30))
    if bg is not None:
        codes.append(_color(bg, 40))
    return "\x1b[" + ";".join(codes) + "m"


def _color(value: int | str, base: int) -> str:
    """The form a program most likely used: 30-37 and 90-97 for the 16 named colours (pyte
    tells those apart from 38;5;n), 38;5;n for the rest of the palette, 38;2 for RGB."""
    if isinstance(value, int):
        if value < 8:
            return str(base + value)
        if value < 16:
            return str(base + 60 + value - 8)
        return f"{base + 8};5;{value}"
    r, g, b = (int(value[i : i + 2], 16) for i in (1, 3, 5))
    return f"{base + 8};2;{r};{g};{b}"
