"""The event log on a failing disk: nothing raises, output is counted lost, other events wait,
and the first write that succeeds again leaves one consistent log with a gap event."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from agent_tty.host import eventlog
from agent_tty.host.eventlog import EventLog
from tests.unit.fake_disk import Disk, disk, lines  # noqa: F401 - disk is a fixture


def test_a_full_disk_drops_output_keeps_input_and_writes_one_gap(tmp_path: Path, disk: Disk) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog.open(path, "abc", 80, 24)
    failing: list[bool] = []
    log.on_failing = lambda: failing.append(True)
    log.output(b"before\n")
    disk.room = 10  # the next line is cut short: it must not stay in the file
    log.output(b"lost one\n")
    log.append("input", data="typed", kind="type")
    log.output(b"lost two\n")
    assert failing == [True] and log.failing
    assert [e.get("type") for e in lines(path)] == [None, "output"]  # whole lines only
    assert log.retry(force=True) is not None  # still full: it backs off
    disk.room = None
    assert log.retry(force=True) is None
    events = lines(path)[1:]
    assert [e["type"] for e in events] == ["output", "input", "gap"]
    assert [e["seq"] for e in events] == [1, 3, 5]
    gap = events[-1]
    assert (gap["eventsLost"], gap["bytesLost"], gap["fromSeq"], gap["toSeq"]) == (2, 18, 2, 4)
    assert log.lost is not None and (log.lost.events_lost, log.lost.bytes_lost) == (2, 18)
    log.output(b"after\n")
    assert lines(path)[-1]["seq"] == 6
    log.close()


def test_retries_back_off_up_to_five_seconds(tmp_path: Path, disk: Disk) -> None:
    log = EventLog.open(tmp_path / "events.jsonl", "abc", 80, 24)
    disk.room = 0
    log.output(b"x")
    delays = [log.retry(force=True) for _ in range(8)]
    assert delays == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0]
    assert 0 < (log.retry() or 0) <= 5.0  # not due yet: only the wait is returned
    log.close()


def test_a_half_line_that_could_not_be_cut_is_cut_before_the_next_write(tmp_path: Path, disk: Disk, monkeypatch: pytest.MonkeyPatch) -> None:
    # A short write whose truncate fails too: a line appended to the half line would make the
    # log unreadable from there on.
    path = tmp_path / "events.jsonl"
    log = EventLog.open(path, "abc", 80, 24)
    log.output(b"before\n")
    real_truncate = os.ftruncate
    refusals = {"left": 1}

    def truncate(fd: int, size: int) -> None:
        if refusals["left"]:
            refusals["left"] -= 1
            raise OSError(errno.EIO, "Input/output error")
        real_truncate(fd, size)

    monkeypatch.setattr(eventlog.os, "ftruncate", truncate)
    disk.room = 10
    log.output(b"cut short\n")
    assert not path.read_bytes().endswith(b"\n")  # the half line is still there
    disk.room = None
    assert log.retry(force=True) is None
    log.output(b"after\n")
    events = lines(path)  # every line whole and parseable
    assert [e.get("type") for e in events] == [None, "output", "gap", "output"]
    assert [e["seq"] for e in events[1:]] == sorted(e["seq"] for e in events[1:])


def test_events_still_kept_when_the_host_ends_are_counted_lost(tmp_path: Path, disk: Disk) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog.open(path, "abc", 80, 24)
    disk.room = 0
    log.append("input", data="typed", kind="type")
    log.append("exit", exit_code=0)
    assert log.lost is None  # kept for a retry, not lost yet
    log.give_up_kept()
    assert log.lost is not None and log.lost.events_lost == 2
