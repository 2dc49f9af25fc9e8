"""The append-only event log, events.jsonl: one JSON object a line, numbered by seq."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from agent_tty.storage.files import FolderGone
from agent_tty.storage.records import EVENT_LOG_VERSION


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class EventLog:
    def __init__(self, fd: int, seq: int) -> None:
        self._fd = fd
        self.seq = seq

    @classmethod
    def open(cls, path: Path, session_id: str, cols: int, rows: int) -> EventLog:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileNotFoundError:
            raise FolderGone(path) from None
        log = cls(fd, 0)
        if os.fstat(fd).st_size == 0:
            header = {
                "version": EVENT_LOG_VERSION,
                "sessionId": session_id,
                "cols": cols,
                "rows": rows,
                "startedAt": time.time(),
            }
            log._write(header)
        return log

    def _write(self, obj: dict[str, Any]) -> None:
        # ensure_ascii keeps surrogate escapes of non-UTF-8 bytes as \udcXX: lossless.
        line = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
        os.write(self._fd, line)

    def append(self, event_type: str, **fields: Any) -> int:
        self.seq += 1
        record = {"seq": self.seq, "time": time.time(), "type": event_type}
        record.update({_camel(k): v for k, v in fields.items() if v is not None})
        self._write(record)
        return self.seq

    def output(self, data: bytes, hide: list[int] | None = None, echo_end: int | None = None) -> int:
        """`hide` and `echo_end` are what readers leave out of `data` (ADR 0007); None: nothing."""
        return self.append("output", data=data.decode("utf-8", "surrogateescape"), hide=hide, echo_end=echo_end)

    def close(self) -> None:
        try:
            os.close(self._fd)
        except OSError:
            pass
