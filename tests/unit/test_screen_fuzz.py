"""Any byte stream is a program's to print: no CSI, OSC, DCS or stray byte ends a screen, on
either backend (hostile round two, item 1: `CSI 1;2 A` killed a pyte host)."""

from __future__ import annotations

import importlib.util
import random

import pytest

from agent_tty.terminal.checkpoint import checkpoint_bytes
from agent_tty.terminal.screen import open_screen, search_text

BACKENDS = ["pyte"] + (["ghostty"] if importlib.util.find_spec("pyghostty") is not None else [])
PREFIXES = ["", "?", ">", "=", "<", "!", " "]
PARAMS = ["", "0", "1", "2", "6", "1;2", "0;0;0", "99999", "4;1", "1:2", ";;", "38;5;300", "38;2;1;2"]
FINALS = [chr(c) for c in range(0x40, 0x7F)]
INTERMEDIATES = ["", "$", " ", '"', "'", "*"]


def _csi_space() -> list[bytes]:
    return [
        f"\x1b[{prefix}{params}{middle}{final}".encode()
        for prefix in PREFIXES
        for params in PARAMS
        for middle in INTERMEDIATES
        for final in FINALS
    ]


def _other_sequences() -> list[bytes]:
    osc = [f"\x1b]{n};{arg}\x07".encode() for n in range(0, 120) for arg in ("?", "x", "", "rgb:1/2/3;?")]
    osc += [f"\x1b]{n};?\x1b\\".encode() for n in (4, 10, 11, 12, 52, 104)]
    dcs = [f"\x1bP{body}\x1b\\".encode() for body in ("$q m", "+q544e", "1$r0m", "=1s", "q#0;2;0;0;0", "")]
    escapes = [f"\x1b{c}".encode() for c in map(chr, range(0x20, 0x7F))]
    escapes += [b"\x1b#8", b"\x1b%@", b"\x1b%G", b"\x1b(0", b"\x1b)B", b"\xc2\x9b1;2A", b"\xc2\x9d0;x\x07"]
    stray = [bytes([b]) for b in range(256)] + [b"\xff\xfe", b"\xed\xa0\x80", b"\x1b[" + b"9" * 5000 + b"m"]
    return osc + dcs + escapes + stray


def _check_readable(screen) -> None:
    screen.lines()
    screen.scrollback()
    screen.cells()
    screen.cursor()
    checkpoint_bytes(screen)
    search_text(screen)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_csi_sequence_leaves_a_working_screen(backend: str) -> None:
    replies: list[bytes] = []
    screen = open_screen(80, 24, replies.append, backend)
    sequences = _csi_space()
    assert len(sequences) > 30_000
    for n, sequence in enumerate(sequences):
        screen.feed(sequence + b"ok")
        if n % 997 == 0:
            _check_readable(screen)
    screen.feed(b"\x1bc\x1b[?1049l\x1b[2J\x1b[Hstill drawing")  # RIS: sequences above set modes
    assert "still drawing" in screen.lines()[0]
    _check_readable(screen)


@pytest.mark.parametrize("backend", BACKENDS)
def test_osc_dcs_escapes_and_stray_bytes_leave_a_working_screen(backend: str) -> None:
    screen = open_screen(80, 24, lambda reply: None, backend)
    for sequence in _other_sequences():
        screen.feed(sequence + b"ok")
    screen.feed(b"\x1b%G\x1bc\x1b[?1049l\x1b[2J\x1b[Hstill drawing")
    assert "still drawing" in screen.lines()[0]
    _check_readable(screen)


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_bytes_split_anywhere_leave_a_working_screen(backend: str) -> None:
    rng = random.Random(20261205)
    pieces = _csi_space()[::37] + _other_sequences()
    for round_ in range(20):
        screen = open_screen(rng.choice([1, 2, 80, 133]), rng.choice([1, 3, 24]), lambda reply: None, backend)
        stream = b"".join(rng.choice(pieces) + bytes(rng.randrange(256) for _ in range(rng.randrange(4))) for _ in range(400))
        at = 0
        while at < len(stream):
            step = rng.randrange(1, 64)
            screen.feed(stream[at : at + step])
            at += step
        if round_ % 5 == 0:
            screen.resize(rng.choice([1, 40, 120]), rng.choice([1, 10, 50]))
        _check_readable(screen)


@pytest.mark.parametrize("backend", BACKENDS)
def test_device_attribute_queries_get_one_reply_each(backend: str) -> None:
    """A program that reads one reply to DA2 must not find a second one after it."""
    replies: list[bytes] = []
    screen = open_screen(80, 24, replies.append, backend)
    screen.feed(b"\x1b[>c")
    assert len(replies) == 1 and replies[0].startswith(b"\x1b[>"), replies
    replies.clear()
    screen.feed(b"\x1b[c")
    assert len(replies) == 1 and replies[0].startswith(b"\x1b[?"), replies
    replies.clear()
    screen.feed(b"\x1b")  # a query split across two reads of the PTY
    screen.feed(b"[>0c")
    assert len(replies) == 1 and replies[0].startswith(b"\x1b[>"), replies


def test_pyte_ignores_prefixed_sgr_as_ghostty_does() -> None:
    """`CSI > 4;1 m` sets modifyOtherKeys; pyte read it as underline and bold."""
    screen = open_screen(10, 1, None, "pyte")
    screen.feed(b"\x1b[>4;1mA")
    cell = screen.cells()[0][0]
    assert cell["char"] == "A" and not cell["underline"] and not cell["bold"]
