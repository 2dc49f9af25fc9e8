"""One frame of the dashboard as rows of styled text, laid out for any size (even 1x1).

Pure: it is given the sessions, the selection and the mirrored screen's rows, and returns
`rows` rows of exactly `cols` cells each, so `--once` prints what the terminal shows.
Cells are counted as a terminal counts them (a wide character takes two; one that would not
fit whole at the edge becomes a space), and control characters never reach the terminal.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

WIDE_LAYOUT = 60
"""From this many columns the list sits left of the mirror; below it, above."""
KEYS = "j/k switch  / search  space pause  q quit"
REVERSE = "rev"

Segment = tuple[str, str]
Row = list[Segment]


@dataclass(frozen=True)
class Entry:
    """A session as the list shows it (what `list` shows, read without reconciling)."""

    session_id: str
    name: str | None
    status: str
    age: str
    mechanism: str

    @property
    def label(self) -> str:
        return self.name or self.session_id

    def matches(self, query: str) -> bool:
        query = query.lower()
        return query in self.session_id.lower() or query in (self.name or "").lower()


@dataclass
class View:
    """What a frame shows."""

    home: str
    entries: list[Entry] = field(default_factory=list)
    selected: int | None = None
    query: str = ""
    searching: bool = False
    paused: bool = False
    screen_lines: list[str] = field(default_factory=list)
    screen_size: tuple[int, int] | None = None
    cursor_row: int = 0
    seq: int = 0
    exit: tuple[int | None, int | None] | None = None
    problem: str | None = None


def cell_width(char: str) -> int:
    if " " <= char < "\x7f":
        return 1
    if char < " " or "\x7f" <= char < "\xa0":
        return 1  # drawn as '?' (clean)
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def clean(text: str) -> str:
    """No control character reaches the terminal: a name or a screen row is data."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or unicodedata.combining(c) else "?" for c in text)


def fit(text: str, width: int) -> str:
    """`text` clipped or padded to exactly `width` cells."""
    if width <= 0:
        return ""
    text = clean(text)
    if text.isascii():
        return text[:width].ljust(width)
    out, used = [], 0
    for char in text:
        w = cell_width(char)
        if used + w > width:
            break
        out.append(char)
        used += w
    return "".join(out) + " " * (width - used)


def frame(view: View, cols: int, rows: int) -> list[Row]:
    if cols <= 0 or rows <= 0:
        return []
    out: list[Row] = [[(fit(_header(view), cols), REVERSE)]]
    body = rows - 1 - (1 if rows >= 3 else 0)
    if body > 0:
        out.extend(_wide(view, cols, body) if cols >= WIDE_LAYOUT else _narrow(view, cols, body))
    if rows >= 3:
        out.append([(fit(_footer(view), cols), REVERSE)])
    return out


def plain(rows: list[Row]) -> list[str]:
    """The frame's text, a string a row, right-trimmed."""
    return ["".join(text for text, _style in row).rstrip() for row in rows]


def _header(view: View) -> str:
    shown = len(view.entries)
    count = f"{shown} session{'s' if shown != 1 else ''}"
    if view.query and not view.searching:
        count += f" matching {view.query!r}"
    return f" agent-tty dashboard  {count}  {view.home}"


def _footer(view: View) -> str:
    if view.searching:
        return f" /{view.query}_   Enter: keep  Esc: clear"
    return " " + KEYS + ("   [PAUSED]" if view.paused else "")


def _wide(view: View, cols: int, body: int) -> list[Row]:
    list_w = min(40, max(24, cols // 3))
    mirror_w = cols - list_w - 1
    left = _list_rows(view, list_w, body)
    right = [[(fit(_title(view), mirror_w), REVERSE)]] + _mirror_rows(view, mirror_w, body - 1)
    return [left[i] + [("│", "")] + right[i] for i in range(body)]


def _narrow(view: View, cols: int, body: int) -> list[Row]:
    list_h = max(1, min(len(view.entries) or 1, body // 3))
    out = _list_rows(view, cols, list_h)
    if body > list_h:
        out.append([(fit(_title(view), cols), REVERSE)])
        out.extend(_mirror_rows(view, cols, body - list_h - 1))
    return out


def _list_rows(view: View, width: int, height: int) -> list[Row]:
    if height <= 0:
        return []
    if not view.entries:
        message = f"no sessions match {view.query!r}" if view.query else "no sessions"
        return [[(fit(" " + message, width), "")]] + [[(" " * width, "")] for _ in range(height - 1)]
    # The list scrolls so that the selected row is on it.
    selected = view.selected if view.selected is not None else 0
    top = min(max(0, selected - height + 1), max(0, len(view.entries) - height))
    label_w = max(6, min(16, width - 17))  # the label, status and age first; the mechanism if room
    rows: list[Row] = []
    for index in range(top, top + height):
        if index >= len(view.entries):
            rows.append([(" " * width, "")])
            continue
        entry = view.entries[index]
        chosen = index == view.selected
        mechanism = entry.mechanism.removeprefix("linux_")
        text = f"{'>' if chosen else ' '} {fit(entry.label, label_w)} {entry.status:<9} {entry.age:>4} {mechanism}"
        rows.append([(fit(text, width), REVERSE if chosen else "")])
    return rows


def _title(view: View) -> str:
    if view.selected is None or not view.entries:
        return " (nothing selected)"
    entry = view.entries[view.selected]
    parts = [entry.session_id + (f" {entry.name}" if entry.name else ""), entry.status, entry.age, entry.mechanism]
    if view.screen_size is not None:
        parts.append(f"{view.screen_size[0]}x{view.screen_size[1]}")
    parts.append(f"seq {view.seq}")
    if view.exit is not None:
        code, signal = view.exit
        parts.append(f"exit {code}" if signal is None else f"signal {signal}")
    if view.paused:
        parts.append("PAUSED")
    if view.problem:
        parts.append(view.problem)
    return " " + "  ".join(parts)


def _mirror_rows(view: View, width: int, height: int) -> list[Row]:
    if height <= 0:
        return []
    lines = view.screen_lines
    # A screen taller than the pane shows the rows down to the cursor's, as a terminal scrolled
    # to it; a cursor on a blank row below the text (a program that printed and sleeps) counts
    # as the last row of text.
    anchor = view.cursor_row
    if not 0 <= anchor < len(lines) or not lines[anchor].strip():
        anchor = max((i for i, line in enumerate(lines) if line.strip()), default=0)
    top = min(max(0, anchor - height + 1), max(0, len(lines) - height))
    shown = lines[top : top + height]
    return [[(fit(line, width), "")] for line in shown] + [[(" " * width, "")] for _ in range(height - len(shown))]
