"""A screen's colours and attributes as runs, the compact form a model can read.

A structured snapshot is a dict of nine keys per cell: 80×24 is about 290 KB of JSON, most of it
cells in the default style. `styles` keeps only what differs: for each row, each run of
adjacent cells in one style other than the default, as `{row, col, len, text}` plus the
attributes that are not the default. `col` and `len` count cells (a wide character takes two),
so `text` is given rather than left to slicing `lines`.
"""

from __future__ import annotations

from typing import Any

DEFAULT_STYLE: dict[str, Any] = {
    "fg": None, "bg": None, "bold": False, "italic": False, "underline": False,
    "inverse": False, "faint": False, "strikethrough": False,
}


def style_runs(cells: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The runs of `cells` (rows of Cell dicts) whose style is not the default, row by row."""
    runs: list[dict[str, Any]] = []
    for row, line in enumerate(cells):
        col = 0
        while col < len(line):
            style = _style(line[col])
            end = col + 1
            while end < len(line) and _style(line[end]) == style:
                end += 1
            if style:
                text = "".join(cell["char"] for cell in line[col:end])
                runs.append({"row": row, "col": col, "len": end - col, "text": text, **style})
            col = end
    return runs


def _style(cell: dict[str, Any]) -> dict[str, Any]:
    """The cell's attributes that differ from the default (an empty dict: the default style)."""
    return {key: cell[key] for key, default in DEFAULT_STYLE.items() if cell.get(key, default) != default}
