"""The dashboard's frame layout and key reading (agent_tty/dashboard/frame.py, app.keys): pure parts."""

from __future__ import annotations

import pytest

from agent_tty.dashboard.app import keys
from agent_tty.dashboard.frame import Entry, View, cell_width, fit, frame, plain


def view(**changes: object) -> View:
    entries = [
        Entry("aaaa11112222", "build", "running", "3m", "linux_cgroup"),
        Entry("bbbb33334444", None, "exited", "1h", "linux_autogroup"),
        Entry("cccc55556666", "日本語の名前", "running", "12s", "linux_cgroup"),
    ]
    base = View(home="/h", entries=entries, selected=0, screen_lines=[f"row {n}" for n in range(24)], screen_size=(80, 24), cursor_row=23)
    for key, value in changes.items():
        setattr(base, key, value)
    return base


def width(text: str) -> int:
    return sum(cell_width(c) for c in text)


@pytest.mark.parametrize("cols", [1, 2, 5, 20, 59, 60, 61, 80, 200])
@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5, 24])
def test_every_size_gives_exactly_that_many_cells(cols: int, rows: int) -> None:
    for shown in (view(), view(entries=[], selected=None, screen_lines=[]), view(searching=True, query="x")):
        out = frame(shown, cols, rows)
        assert len(out) == rows
        assert all(width("".join(text for text, _ in row)) == cols for row in out), (cols, rows)


def test_zero_size_draws_nothing() -> None:
    assert frame(view(), 0, 10) == [] and frame(view(), 10, 0) == []


def test_wide_layout_puts_the_list_left_and_follows_the_cursor() -> None:
    lines = plain(frame(view(), 100, 10))
    assert lines[0].startswith(" agent-tty dashboard  3 sessions  /h")
    assert lines[1].startswith("> build ") and "│ aaaa11112222 build  running  3m  linux_cgroup  80x24" in lines[1]
    # 10 rows: header, 8 of body (a title and 7 of the mirror), keys. The cursor is on row 23.
    assert [line.split("│")[1].strip() for line in lines[2:9]] == [f"row {n}" for n in range(17, 24)]
    assert lines[-1].startswith(" j/k switch")


def test_narrow_layout_puts_the_list_on_top() -> None:
    lines = plain(frame(view(selected=1), 40, 12))
    assert lines[1].startswith("  build") and lines[2].startswith("> bbbb33334444")
    assert lines[4].startswith(" bbbb33334444  exited") and "│" not in "".join(lines)


def test_a_cursor_on_a_blank_row_below_the_text_shows_the_text() -> None:
    lines = plain(frame(view(screen_lines=["HELLO", *[""] * 23], cursor_row=1), 20, 5))
    assert lines[3] == "HELLO"


def test_wide_characters_never_straddle_the_edge_and_controls_never_reach_the_terminal() -> None:
    assert fit("日本語", 5) == "日本 " and width(fit("日本語", 5)) == 5
    assert fit("a\x1b[2Jb\x07", 6) == "a?[2Jb"
    assert fit("e\u0301x", 2) == "e\u0301x"


def test_search_and_pause_are_shown() -> None:
    assert plain(frame(view(searching=True, query="bu"), 80, 5))[-1].startswith(" /bu_")
    assert "[PAUSED]" in plain(frame(view(paused=True), 80, 5))[-1]
    assert "matching 'bu'" in plain(frame(view(query="bu", entries=view().entries[:1]), 80, 5))[0]
    assert "no sessions match 'zz'" in plain(frame(view(query="zz", entries=[], selected=None), 80, 5))[1]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"jkq", ["j", "k", "q"]),
        (b"\x1b[A\x1b[B\x1bOA\x1bOB", ["up", "down", "up", "down"]),
        (b"\x1b", ["esc"]),
        (b"\x1b[1;5C/x\r", ["/", "x", "enter"]),  # Ctrl+Right: not ours, skipped whole
        (b"\x7f\x03 ", ["backspace", "ctrl-c", " "]),
        ("é".encode(), ["é"]),
        (b"\x1b\x1b[A", ["esc", "up"]),
    ],
)
def test_keys(data: bytes, expected: list[str]) -> None:
    assert keys(data) == expected
