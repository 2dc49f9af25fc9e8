"""One small screen interface with two backends, and the snapshot every command returns."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

SCROLLBACK_LINES = 10_000
DEFAULT_FG = (229, 229, 229)
DEFAULT_BG = (0, 0, 0)
BACKEND_ENV = "AGENT_TTY_SCREEN"
"""Force a backend: `ghostty` or `pyte` (tests run both)."""

Reply = Callable[[bytes], None]


class Screen(Protocol):
    backend: str

    def feed(self, data: bytes) -> None: ...

    def resize(self, cols: int, rows: int) -> None: ...

    @property
    def size(self) -> tuple[int, int]: ...

    def lines(self) -> list[str]:
        """The visible rows, right-trimmed; always `rows` entries."""

    def scrollback(self) -> list[str]:
        """Rows that scrolled off the top of the primary screen, oldest first."""

    def cursor(self) -> tuple[int, int, bool]: ...

    def alternate(self) -> bool: ...

    def title(self) -> str: ...

    def app_cursor(self) -> bool:
        """DECCKM: arrows send ESC O A instead of ESC [ A."""

    def bracketed_paste(self) -> bool: ...

    def cells(self) -> list[list[dict[str, Any]]]:
        """Per visible cell: char, fg, bg (None, a palette index, or '#rrggbb'), and attributes."""


def backend_name() -> str:
    forced = os.environ.get(BACKEND_ENV)
    if forced in ("ghostty", "pyte"):
        return forced
    try:
        import importlib.util

        return "ghostty" if importlib.util.find_spec("pyghostty") is not None else "pyte"
    except (ImportError, ValueError):
        return "pyte"


FAST_INSTALL = "pip install 'agent-tty[fast]'"
PYTE_NOTE = (
    "pyte is the portable fallback: it parses program output about 300x slower than Ghostty's "
    f"engine (docs/USAGE.md, Driving and observing). Where a pyghostty wheel exists (Linux glibc x86_64/aarch64, "
    f"macOS 13+), `{FAST_INSTALL}` installs it."
)


def backend_report() -> dict[str, Any]:
    """Which screen backend new sessions get, and why (for doctor)."""
    name = backend_name()
    forced = os.environ.get(BACKEND_ENV) in ("ghostty", "pyte")
    report: dict[str, Any] = {"backend": name, "forcedBy": BACKEND_ENV if forced else None, "error": None, "note": None}
    if name == "ghostty":
        try:
            import pyghostty  # noqa: F401  (a wheel that installed but cannot load its library)
        except Exception as err:  # noqa: BLE001 - any failure to load is reported, not raised
            report["error"] = f"pyghostty does not load: {type(err).__name__}: {err}"
    else:
        report["note"] = PYTE_NOTE
    return report


def open_screen(cols: int, rows: int, on_reply: Reply | None = None, backend: str | None = None) -> Screen:
    """A screen of `cols` x `rows`. `on_reply` receives the answers to terminal queries
    (cursor position, device attributes, colours); an offline replay passes None."""
    name = backend or backend_name()
    if name == "ghostty":
        from agent_tty.terminal.ghostty_screen import GhosttyScreen

        return GhosttyScreen(cols, rows, on_reply)
    from agent_tty.terminal.pyte_screen import PyteScreen

    return PyteScreen(cols, rows, on_reply)


@dataclass(frozen=True)
class SearchText:
    """What a wait searches: the scrollback, then the visible rows, without trailing blanks;
    and, where the cursor's row has blanks before the cursor, the same text with that row
    keeping them (a prompt's last space: `wait --regex '\\$ $'` as well as `'^\\$$'`)."""

    text: str
    padded: str | None = None
    cursor_row: int = -1
    """The cursor's row counted from the top of the scrollback (-1: off the screen)."""
    cursor_at: int = -1
    """Where the cursor's row begins in `text` (and in `padded`, which differs only from there)."""

    def forms(self) -> tuple[str, ...]:
        return (self.text,) if self.padded is None else (self.text, self.padded)


def search_text(screen: Screen) -> SearchText:
    rows = screen.lines()
    back = screen.scrollback()
    text = "\n".join([*back, *rows])
    x, y, _visible = screen.cursor()
    if not 0 <= y < len(rows):
        return SearchText(text)
    row = len(back) + y
    at = sum(len(line) + 1 for line in back) + sum(len(line) + 1 for line in rows[:y])
    if _columns(rows[y]) >= x:
        return SearchText(text, None, row, at)
    rows = [*rows]
    rows[y] += " " * (x - _columns(rows[y]))
    return SearchText(text, "\n".join([*back, *rows]), row, at)


def _columns(line: str) -> int:
    if line.isascii():
        return len(line)
    from agent_tty.host.echo import width

    return sum(width(char) for char in line)


def screen_hash(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()


def snapshot(
    screen: Screen, seq: int, *, structured: bool = False, scrollback: bool = False, max_cells: int | None = None
) -> dict[str, Any]:
    """The snapshot's result; `max_cells`: refuse (INVALID_INPUT) a structured one of more cells,
    before any cell is read."""
    cols, rows = screen.size
    if structured:
        from agent_tty.protocol.values import check_cells

        check_cells(cols, rows, max_cells)
    lines = screen.lines()
    x, y, visible = screen.cursor()
    result: dict[str, Any] = {
        "cols": cols,
        "rows": rows,
        "lines": lines,
        "text": "\n".join(lines).rstrip("\n"),
        "cursor": {"x": x, "y": y, "visible": visible},
        "alternateScreen": screen.alternate(),
        "title": screen.title(),
        "screenHash": screen_hash(lines),
        "seq": seq,
        "backend": screen.backend,
    }
    if scrollback:
        result["scrollback"] = screen.scrollback()
    if structured:
        result["cells"] = screen.cells()
    return result
