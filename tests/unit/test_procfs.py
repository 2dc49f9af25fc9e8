from __future__ import annotations

import os

import pytest

from agent_tty_plugins._posix import groups, procfs


def test_parse_stat_with_spaces_and_parens_in_comm() -> None:
    line = "4242 (we ird) (name)) S 1 4242 4242 34816 4242 4194560 " + " ".join(["0"] * 12) + " 987654 0 0"
    stat = procfs.parse_stat(line)
    assert (stat.pid, stat.state, stat.ppid, stat.pgrp, stat.session) == (4242, "S", 1, 4242, 4242)
    assert stat.start_time == 987654


def test_read_own_stat() -> None:
    stat = procfs.read_stat(os.getpid())
    assert stat is not None and stat.pid == os.getpid() and stat.ppid == os.getppid()
    assert procfs.read_stat(2**22 + 12345) is None


@pytest.mark.parametrize("text, value", [("/autogroup-17 nice 0\n", 17), ("", procfs.DEFAULT_AUTOGROUP), ("\n", procfs.DEFAULT_AUTOGROUP), ("/other-3 nice 0", None), ("/autogroup-x", None)])
def test_parse_autogroup(text: str, value: int | None) -> None:
    assert procfs.parse_autogroup(text) == value


def test_group_signals_refuse_wide_ids() -> None:
    for pgid in (0, 1, -1, -5, True):
        with pytest.raises(ValueError):
            groups.signal_group(pgid, 0)  # type: ignore[arg-type]


def test_probe_of_a_free_group_id() -> None:
    assert groups.probe_group(2**22 + 12345) is groups.Probe.NONE
