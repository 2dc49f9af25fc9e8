"""The event log's rotation (ADR 0015): a new file starts with a checkpoint and the seq goes on;
K old segments are kept; a rotation that fails on a full disk leaves the current file whole,
appended to as before, and is tried again after a back-off."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from agent_tty.host.eventlog import SEGMENTS_KEPT, EventLog, segment_bytes
from agent_tty.terminal.checkpoint import checkpoint_bytes
from agent_tty.terminal.replay import replay
from agent_tty.terminal.screen import open_screen
from tests.conftest import BACKENDS
from tests.unit.fake_disk import Disk, disk, lines  # noqa: F401 - disk is a fixture


def chatty(log: EventLog, screen, count: int) -> None:  # type: ignore[no-untyped-def]
    for i in range(count):
        data = f"\x1b[3{i % 8}mline {log.seq + 1}\x1b[0m {'x' * 50}\r\n".encode()
        log.output(data)
        screen.feed(data)


def test_segment_size_comes_from_the_environment() -> None:
    assert segment_bytes({}) == 64 << 20
    assert segment_bytes({"AGENT_TTY_LOG_SEGMENT_MB": "2"}) == 2 << 20
    assert segment_bytes({"AGENT_TTY_LOG_SEGMENT_MB": "0.5"}) == 512 << 10
    for bad in ("", "0", "-1", "lots", "nan", "1e30"):
        assert segment_bytes({"AGENT_TTY_LOG_SEGMENT_MB": bad}) == 64 << 20, bad


@pytest.mark.parametrize("backend", BACKENDS)
def test_rotations_keep_k_segments_and_replay_the_same_screen(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog.open(path, "abc", 40, 10)
    log.segment_bytes = 8 << 10
    screen = open_screen(40, 10, None, backend)
    for _ in range(5):
        while not log.rotation_due():
            chatty(log, screen, 10)
        last = log.seq
        assert log.rotate(checkpoint_bytes(screen), 40, 10)
        head, first = lines(path)[:2]
        assert head["cols"] == 40 and head["sessionId"] == "abc"
        assert first == {**first, "seq": last + 1, "type": "checkpoint"}
        assert lines(tmp_path / f"events.{last}.jsonl")[-1]["seq"] == last
    chatty(log, screen, 3)
    log.close()
    names = sorted(os.listdir(tmp_path))
    assert names == sorted(["events.jsonl", f"events.{last}.jsonl"]) and SEGMENTS_KEPT == 1
    replayed, seq = replay(path, backend)
    assert seq == log.seq
    assert replayed.lines() == screen.lines() and replayed.scrollback() == screen.scrollback()
    assert replayed.cells() == screen.cells() and replayed.cursor() == screen.cursor()


@pytest.mark.parametrize("room", [0, 100])
def test_a_rotation_on_a_full_disk_keeps_the_current_file_and_is_retried(tmp_path: Path, disk: Disk, room: int) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog.open(path, "abc", 40, 10)
    log.segment_bytes = 4 << 10
    screen = open_screen(40, 10, None, "pyte")
    while not log.rotation_due():
        chatty(log, screen, 10)
    before = path.read_bytes()
    disk.room = room  # full, or room for part of the next file
    assert not log.rotate(checkpoint_bytes(screen), 40, 10)
    assert "No space left" in log.rotate_error
    assert sorted(os.listdir(tmp_path)) == ["events.jsonl"]  # no temp file, no second name
    assert path.read_bytes() == before
    assert not log.rotation_due()  # backing off
    disk.room = None
    chatty(log, screen, 2)  # the current file goes on
    assert lines(path)[-1]["seq"] == log.seq and not log.failing
    time.sleep(0.25)
    assert log.rotation_due()
    last = log.seq
    assert log.rotate(checkpoint_bytes(screen), 40, 10)
    assert lines(tmp_path / f"events.{last}.jsonl")[-1]["seq"] == last
    assert log.rotate_error == ""
    log.close()


@pytest.mark.parametrize("alternate", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_checkpoint_rebuilds_the_screen(backend: str, alternate: bool) -> None:
    """Scrollback as text, the visible rows with colours and attributes (wide and combining
    characters too), the cursor, the title and the modes; then later output lands the same."""
    screen = open_screen(30, 8, None, backend)
    screen.feed(b"".join(b"row %d \x1b[31mred\x1b[0m \xe4\xb8\xad\xe6\x96\x87 e\xcc\x81 " % i + b"x" * (i % 40) + b"\r\n" for i in range(300)))
    screen.feed(b"\x1b[1;44mbold on blue\x1b[0m \x1b[38;5;200mpal\x1b[38;2;1;2;3mrgb\x1b[7;4minv\x1b[0m")
    screen.feed(b"\x1b[?2004h\x1b[?1h\x1b]2;a title\x07\x1b[3;5H")
    if alternate:
        screen.feed(b"\x1b[?1049h\x1b[Hon the alternate screen \x1b[9mstruck\x1b[0m\x1b[?25l\x1b[5;7H")
    rebuilt = open_screen(30, 8, None, backend)
    rebuilt.feed(checkpoint_bytes(screen))
    for read in ("lines", "scrollback", "cells", "cursor", "alternate", "title", "app_cursor", "bracketed_paste"):
        assert getattr(rebuilt, read)() == getattr(screen, read)(), read
    later = b"".join(b"later %d\r\n" % i for i in range(12))
    screen.feed(later)
    rebuilt.feed(later)
    assert rebuilt.lines() == screen.lines() and rebuilt.scrollback() == screen.scrollback()


def _cast_events(files: list[Path]) -> list[list]:
    from agent_tty.terminal.asciicast import CastStats, export_asciicast

    text = b"".join(export_asciicast(files, CastStats())).decode()
    return [json.loads(line) for line in text.splitlines()[1:]]


def _rotated_log(tmp_path: Path, rotations: int) -> list[int]:
    """A log rotated `rotations` times with every segment kept; the last seq of each."""
    path = tmp_path / "events.jsonl"
    log = EventLog.open(path, "abc", 40, 10)
    log.segment_bytes = 8 << 10
    screen = open_screen(40, 10, None, "pyte")
    ends = []
    for _ in range(rotations):
        while not log.rotation_due():
            chatty(log, screen, 10)
        ends.append(log.seq)
        os.link(path, tmp_path / f"keep.{log.seq}")  # survives the prune, to put back below
        assert log.rotate(checkpoint_bytes(screen), 40, 10)
    chatty(log, screen, 3)
    log.close()
    for end in ends:
        if not (tmp_path / f"events.{end}.jsonl").exists():
            os.rename(tmp_path / f"keep.{end}", tmp_path / f"events.{end}.jsonl")
        else:
            os.unlink(tmp_path / f"keep.{end}")
    return ends


def test_an_export_reads_every_event_once_when_a_file_has_two_names(tmp_path: Path) -> None:
    # A host that died between linking the old file to its seq name and swapping in the next:
    # events.<seq>.jsonl and events.jsonl are the same file. Its events go out once.
    (end,) = _rotated_log(tmp_path, 1)
    os.unlink(tmp_path / "events.jsonl")
    os.link(tmp_path / f"events.{end}.jsonl", tmp_path / "events.jsonl")
    from agent_tty.storage.segments import log_files

    once = _cast_events([tmp_path / f"events.{end}.jsonl"])
    assert _cast_events(log_files(tmp_path)) == once


def test_an_export_that_misses_a_segment_redraws_from_the_next_checkpoint(tmp_path: Path) -> None:
    # A rotation during a live export pruned a segment the export had listed: the next file's
    # checkpoint is kept (on a cleared screen), so the recording ends on the right screen.
    from agent_tty.terminal.asciicast import REDRAW

    first, second = _rotated_log(tmp_path, 2)
    files = [tmp_path / f"events.{first}.jsonl", tmp_path / "events.jsonl"]  # events.<second> missed
    out = [e for e in _cast_events(files) if e[1] == "o"]
    redraws = [e for e in out if e[2].startswith(REDRAW)]
    assert len(redraws) == 1
    played = open_screen(40, 10, None, "pyte")
    for event in out:
        played.feed(event[2].encode())
    replayed, _seq = replay(tmp_path / "events.jsonl", "pyte")
    assert played.lines() == replayed.lines()


def test_prune_goes_past_a_name_it_cannot_remove(tmp_path: Path) -> None:
    from agent_tty.storage import segments

    (tmp_path / "events.3.jsonl").mkdir()  # not a file of ours
    for seq in (5, 9):
        (tmp_path / f"events.{seq}.jsonl").write_text("{}\n")
    with segments.open_folder(tmp_path) as folder:
        segments.prune(folder, 1)
    assert sorted(os.listdir(tmp_path)) == ["events.3.jsonl", "events.9.jsonl"]
