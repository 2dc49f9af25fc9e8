"""The file-system steps of the event log's rotation (ADR 0015), all inside the session folder
(through its fd on POSIX, storage/fs.py) and never through a link: the next file is written
aside, the current one gets a second name, and a rename swaps them, so a reader always finds
an events.jsonl."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from agent_tty.storage.fs import Folder
from agent_tty.storage.home import EVENTS

NEXT = ".events.next.tmp"
SEGMENT_RE = re.compile(r"events\.([0-9]{1,20})\.jsonl")
"""An old segment, named by its last seq: names never shift, and sort by that number."""


def segment_name(last_seq: int) -> str:
    return f"events.{last_seq}.jsonl"


def open_folder(folder: Path) -> Folder:
    """The session folder, never through a link. FileNotFoundError when it is gone."""
    return Folder(folder)


def write_next(folder: Folder, lines: Iterable[bytes]) -> int:
    """The next log, written whole and synced under NEXT: its fd, open for appending. An OSError
    (a full disk) leaves no NEXT behind and the current log untouched."""
    discard_next(folder)  # a stale one from an earlier try that could not even clean up
    fd = folder.open(NEXT, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL)
    try:
        for line in lines:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        discard_next(folder)
        raise
    return fd


def discard_next(folder: Folder) -> None:
    """Best effort: a NEXT that cannot go now is removed by the next try (or with the folder)."""
    try:
        folder.unlink(NEXT)
    except OSError:
        pass


def swap_in_next(folder: Folder, last_seq: int) -> None:
    """events.jsonl keeps a second name, events.<last_seq>.jsonl, then NEXT is renamed over it.
    A failure before the rename leaves events.jsonl as it was (the second name is dropped)."""
    old = segment_name(last_seq)
    try:
        folder.unlink(old)  # only a failed try on this same log made one
    except FileNotFoundError:
        pass
    folder.link(EVENTS, old)
    try:
        folder.replace(NEXT, EVENTS)
    except BaseException:
        try:
            folder.unlink(old)
        except OSError:
            pass
        raise
    try:
        folder.sync()  # the new names outlive a crash
    except OSError:
        pass


def _segments(names: Iterable[str]) -> list[tuple[int, str]]:
    found = []
    for name in names:
        match = SEGMENT_RE.fullmatch(name)
        if match:
            found.append((int(match.group(1)), name))
    return sorted(found)


def prune(folder: Folder, keep: int) -> None:
    """Unlink all but the newest `keep` old segments. Errors wait for the next rotation."""
    segments = _segments(folder.listdir())
    for _seq, name in segments[: max(0, len(segments) - keep)]:
        try:
            folder.unlink(name)
        except OSError:
            pass  # gone already, or not a file of ours (a folder by that name): never fatal


def log_files(folder: Path) -> list[Path]:
    """The kept old segments, oldest first, then events.jsonl: the whole log still on disk."""
    try:
        with open_folder(folder) as opened:
            names = opened.listdir()
    except (FileNotFoundError, NotADirectoryError):
        return [folder / EVENTS]
    return [folder / name for _seq, name in _segments(names)] + [folder / EVENTS]
