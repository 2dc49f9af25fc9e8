"""The documented 10,000-line scrollback, kept alike by both screen backends, live and replayed."""

from __future__ import annotations

import re

import pytest

from agent_tty.terminal.screen import SCROLLBACK_LINES, open_screen
from tests.conftest import HAS_GHOSTTY, NO_GHOSTTY, Cli, wait_until

pytestmark = pytest.mark.integration


def bash(cli: Cli) -> str:
    return cli.create("bash", "--norc", "--noprofile", options=("--env", "PS1=$ "))["sessionId"]


def test_wait_finds_a_mark_2000_lines_up(tty: Cli) -> None:
    # The issue: Ghostty kept about 825 lines, so the mark had scrolled out before the wait.
    sid = bash(tty)
    ran = tty.run("run", sid, "printf 'BUILD-START-%s\\n' MARK; seq 1 2000", "--timeout", "60s").result
    assert ran["completed"] is True and ran["exitStatus"] == 0
    found = tty.run("wait", sid, "--text", "BUILD-START-MARK", "--timeout", "5s")
    assert found.code == 0 and found.result["matched"] is True, found.stdout
    snap = tty.run("snapshot", sid, "--scrollback").result
    everything = snap["scrollback"] + snap["lines"]
    mark = everything.index("BUILD-START-MARK")  # only the output has it: the command line says %s
    assert everything[mark + 1 : mark + 2001] == [str(n) for n in range(1, 2001)]


def test_scrollback_keeps_exactly_the_last_10000_lines(tty: Cli) -> None:
    sid = bash(tty)
    ran = tty.run("run", sid, "seq -f n%05g 1 12000", "--timeout", "90s").result
    assert ran["completed"] is True
    live = tty.run("snapshot", sid, "--scrollback").result
    # 24 rows: n11978 … n12000, then the prompt. Above them, the 10,000 rows that scrolled
    # off last, oldest first: the same on both backends.
    assert live["lines"] == [f"n{n:05d}" for n in range(11978, 12001)] + ["$"]
    assert len(live["scrollback"]) == SCROLLBACK_LINES == 10_000
    assert live["scrollback"] == [f"n{n:05d}" for n in range(1978, 11978)]

    # An ended session is snapshotted from its event log: the same scrollback. The program
    # must end without a word (bash prints on SIGHUP), so it becomes a sleep that gets KILL.
    tty.run("type", sid, "exec sleep 600")
    tty.run("send-keys", sid, "Enter")
    tty.run("wait", sid, "--screen-stable-ms", "300", "--timeout", "10s")
    last = tty.run("snapshot", sid, "--scrollback").result
    assert len(last["scrollback"]) == SCROLLBACK_LINES and last["scrollback"][0] == "n01979"
    tty.run("signal", sid, "KILL")
    wait_until(lambda: tty.manifest(sid)["status"] == "exited", what="the program to end")
    replayed = tty.run("snapshot", sid, "--scrollback").result
    assert replayed["source"] == "replay" and last["source"] == "live"
    assert replayed["scrollback"] == last["scrollback"] and replayed["lines"] == last["lines"]


LINES = {
    "plain": lambda n: b"%d\r\n" % n,
    # Pages of many hyperlinks or graphemes take more bytes for the same rows.
    "links": lambda n: b"\x1b]8;;file:///src/m%d.c\x1b\\src/m%d.c\x1b]8;;\x1b\\: warning\r\n" % (n, n),
    "graphemes": lambda n: ("%d " % n + "e\u0301a\u0308 \U0001f44d\U0001f3fd \U0001f468\u200d\U0001f469\u200d\U0001f467 " * 4).encode() + b"\r\n",
}


@NO_GHOSTTY
@pytest.mark.parametrize(("cols", "kind"), [(6, "plain"), (20, "plain"), (80, "plain"), (200, "plain"), (500, "plain"), (80, "links"), (80, "graphemes")])
def test_ghostty_keeps_exactly_10000_rows(cols: int, kind: str) -> None:
    # Ghostty drops its scrollback a whole page at a time, and a page holds more rows the
    # narrower the screen and takes more bytes the denser its rows: past the first drops the
    # count must never dip below 10,000.
    line, first = LINES[kind], 100_000 if kind == "plain" else 20_000
    screen = open_screen(cols, 24, None, "ghostty")
    screen.feed(b"".join(line(n) for n in range(1, first)))  # a row each: 6 digits at most
    last = first + (10_000 if kind == "plain" else 2_000)
    for n in range(first, last):
        screen.feed(line(n))
        assert screen._term.get("scrollback_rows", "size_t") >= SCROLLBACK_LINES, n  # type: ignore[attr-defined]
    rows = [*screen.scrollback(), *filter(None, screen.lines())]
    assert len(rows) == SCROLLBACK_LINES + 23
    assert [int(re.match(r"\D*(\d+)", row)[1]) for row in rows] == list(range(last - len(rows), last))  # type: ignore[index]
    if kind == "plain":
        assert rows == [str(n) for n in range(last - len(rows), last)]


def test_both_backends_keep_wrapped_rows_alike() -> None:
    # A line wider than the screen takes several rows; each row is one scrollback entry.
    text = b"".join(b"%04d:" % n + b"abcdefghij" * 17 + b"\r\n" for n in range(150))
    kept = {}
    for backend in ("ghostty", "pyte") if HAS_GHOSTTY else ("pyte",):
        screen = open_screen(80, 24, None, backend)
        screen.feed(text)
        kept[backend] = screen.scrollback() + screen.lines()
    assert kept["pyte"][:3] == ["0000:" + ("abcdefghij" * 8)[:75], ("abcdefghij" * 17)[75:155], ("abcdefghij" * 17)[155:]]
    assert len(set(map(tuple, kept.values()))) == 1, "the backends differ"


@NO_GHOSTTY
def test_both_backends_resize_rows_alike() -> None:
    # Fewer rows: blank rows below the cursor go first, then the top rows into the scrollback;
    # more rows with the cursor on the last one: rows come back from the scrollback.
    steps = [
        (8, b"a\r\nb\r\nc\r\nd\r\ne", [(20, 3), (20, 6)]),  # the cursor on e
        (8, b"a\r\nb\r\nc\r\nd\r\ne\x1b[2;1H", [(20, 3)]),  # the cursor on b
        (4, b"1\r\n2\r\n3\r\n4\r\n5\r\n6", [(20, 6), (20, 2)]),
        (8, b"\x1b[2;5r\x1b[5;1Ha\r\nb\r\nc", []),  # a scroll region below the top row keeps no scrollback
    ]
    for rows, output, sizes in steps:
        screens = [open_screen(20, rows, None, backend) for backend in ("ghostty", "pyte")]
        for screen in screens:
            screen.feed(output)
        for size in [None, *sizes]:
            if size:
                for screen in screens:
                    screen.resize(*size)
            ghostty, pyte = ((s.scrollback(), s.lines(), s.cursor()) for s in screens)
            assert ghostty == pyte, (output, size)
