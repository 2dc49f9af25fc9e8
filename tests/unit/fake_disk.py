"""A disk that fills up, for the event log's unit tests: os.write as the log sees it."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from agent_tty.host import eventlog


class Disk:
    """Full (ENOSPC) at `room` 0, room for `room` more bytes, or fine at None."""

    def __init__(self) -> None:
        self.room: int | None = None
        self.real = os.write

    def write(self, fd: int, data: bytes) -> int:
        if self.room is None:
            return self.real(fd, data)
        if self.room == 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        written = self.real(fd, data[: self.room])
        self.room -= written
        return written


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Disk:
    fake = Disk()
    monkeypatch.setattr(eventlog.os, "write", fake.write)
    return fake


def lines(path: Path) -> list[dict]:
    """The log's lines, parsed: the file must end with a whole line."""
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.splitlines()]
