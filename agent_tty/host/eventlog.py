"""The append-only event log, events.jsonl: one JSON object a line, numbered by seq.

A write that fails (a full disk: ENOSPC, EDQUOT; EIO, EROFS...) never raises: the program keeps
running and the live screen keeps its feed. While writes fail, output events are dropped and
counted; other events (input, resize, signal, exit, marker) wait in memory, up to a bound. Writes
are retried with back-off; the first one that succeeds writes the waiting events and then one
`gap` event that says what was lost, so the log stays one consistent, parseable record.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agent_tty.storage import fs
from agent_tty.storage.files import FolderGone
from agent_tty.storage.records import EVENT_LOG_VERSION, LogLoss

SEGMENT_ENV = "AGENT_TTY_LOG_SEGMENT_MB"
SEGMENT_MB = 64
"""N: the log starts a new file once events.jsonl passes this many MiB (AGENT_TTY_LOG_SEGMENT_MB,
read by the host, overrides it: tests use 2) and at least N/2 of them came after its checkpoint:
a checkpoint as big as N (a small N, a wide screen) never makes it rotate again at once."""
SEGMENTS_KEPT = 1
"""K (at least 1): old segments kept beside events.jsonl. The log's disk bound is (K+1) times N,
plus the next file's checkpoint while it is written, plus a read or two (docs/USAGE.md, Limits)."""
CHECKPOINT_CHUNK = 1 << 20
"""Bytes of checkpoint data per event: a line far below the readers' LINE_MAX at any size."""

RETRY_FIRST_S = 0.1
"""After a failed write, the log tries again this long after; each further failure doubles it..."""
RETRY_MAX_S = 5.0
"""...up to this: once space returns, the gap event is written within about 5 s."""
KEPT_MAX_EVENTS = 1000
KEPT_MAX_BYTES = 1 << 20
"""Non-output events kept in memory while writes fail; beyond either bound they are lost too."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _line(obj: dict[str, Any]) -> bytes:
    # ensure_ascii keeps surrogate escapes of non-UTF-8 bytes as \udcXX: lossless.
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def segment_bytes(environ: Mapping[str, str] = os.environ) -> int:
    """N in bytes; a value that is no positive number of MiB is ignored."""
    raw = environ.get(SEGMENT_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value <= 1 << 20:
        value = SEGMENT_MB
    return max(1, int(value * (1 << 20)))


class EventLog:
    def __init__(self, fd: int, seq: int) -> None:
        self._fd = fd
        self.seq = seq
        self.folder: Path | None = None
        """The session folder, for rotation; None: this log never rotates."""
        self.session_id = ""
        self.started_at = 0.0
        self.segment_bytes = segment_bytes()
        self.size = 0
        """Bytes in the current file, as we wrote them."""
        self.checkpoint_end = 0
        """Where the current file's checkpoint ends (0: it has none)."""
        self.rotations = 0
        self.rotate_error = ""
        """Why the last rotation failed ("" once one succeeds): the log stays whole meanwhile."""
        self._rotate_delay = RETRY_FIRST_S
        self._rotate_at = 0.0
        self.lost: LogLoss | None = None
        """Everything this log has lost so far (the manifest's `logIncomplete`); None: nothing."""
        self.failing = False
        """Writes fail now: events wait or are dropped until a retry succeeds."""
        self.error = ""
        """The last write error, for host.log and the gap event."""
        self.on_failing: Callable[[], None] | None = None
        """Called when writes start to fail (the host arms its retry timer)."""
        self._cut_to: int | None = None
        """Where a short write's half line must be cut off before anything else is written."""
        self._kept: list[bytes] = []
        self._kept_bytes = 0
        self._gap: dict[str, Any] | None = None
        self._delay = RETRY_FIRST_S
        self._retry_at = 0.0

    @classmethod
    def open(cls, path: Path, session_id: str, cols: int, rows: int) -> EventLog:
        try:
            fd = fs.open_file(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        except FileNotFoundError:
            raise FolderGone(path) from None
        log = cls(fd, 0)
        log.folder, log.session_id, log.started_at = path.parent, session_id, time.time()
        log.size = os.fstat(fd).st_size
        if log.size == 0:
            log._write(log._header(cols, rows), keep=True, data=None)
        return log

    def _header(self, cols: int, rows: int) -> bytes:
        header = {"version": EVENT_LOG_VERSION, "sessionId": self.session_id, "cols": cols, "rows": rows, "startedAt": self.started_at}
        return _line(header)

    # ------------------------------------------------------------------ writing

    def _put(self, line: bytes) -> bool:
        """One whole line or nothing: a short write (the disk filled mid-line) is cut back off,
        and nothing is written after a cut that did not succeed yet (a line appended to half a
        line would make the log unreadable from there)."""
        if self._cut_to is not None:
            try:
                os.ftruncate(self._fd, self._cut_to)
            except OSError as err:
                self.error = f"cannot cut a short line: {err.strerror or err}"
                return False
            self._cut_to = None
        try:
            written = os.write(self._fd, line)
        except OSError as err:
            self.error = f"{err.strerror or err} ({err.__class__.__name__})"
            return False
        if written == len(line):
            self.size += written
            return True
        self.error = f"short write ({written} of {len(line)} bytes)"
        try:
            end = os.fstat(self._fd).st_size  # O_APPEND: what we wrote ends the file
        except OSError:
            end = None
        if end is not None:
            self._cut_to = end - written
            try:
                os.ftruncate(self._fd, self._cut_to)
                self._cut_to = None
            except OSError:
                pass  # cut again before the next write (a reader drops a cut last line)
        return False

    def _write(self, line: bytes, keep: bool, data: str | None) -> None:
        if not self.failing and self._put(line):
            return
        if not self.failing:
            self.failing = True
            self._delay, self._retry_at = RETRY_FIRST_S, time.monotonic() + RETRY_FIRST_S
            if self.on_failing is not None:
                self.on_failing()
        if keep and len(self._kept) < KEPT_MAX_EVENTS and self._kept_bytes + len(line) <= KEPT_MAX_BYTES:
            self._kept.append(line)
            self._kept_bytes += len(line)
        else:
            self._count_lost(len(data.encode("utf-8", "surrogateescape")) if data else 0)

    def _count_lost(self, size: int) -> None:
        """`size`: the event's bytes of program output or input (0 for other events)."""
        now = time.time()
        before = self.lost or LogLoss(since=now, events_lost=0, bytes_lost=0)
        self.lost = before.replace(events_lost=before.events_lost + 1, bytes_lost=before.bytes_lost + size)
        gap = self._gap or {"since": now, "fromSeq": self.seq, "eventsLost": 0, "bytesLost": 0}
        gap.update(toSeq=self.seq, eventsLost=gap["eventsLost"] + 1, bytesLost=gap["bytesLost"] + size)
        self._gap = gap

    def retry(self, force: bool = False) -> float | None:
        """Try the waiting writes when their turn came (or `force`); the delay until the next
        try while writes still fail, None once the log is whole again."""
        if not self.failing:
            return None
        now = time.monotonic()
        if not force and now < self._retry_at:
            return self._retry_at - now
        while self._kept:
            if not self._put(self._kept[0]):
                return self._back_off()
            self._kept_bytes -= len(self._kept.pop(0))
        if self._gap is not None:
            record = {"seq": self.seq + 1, "time": time.time(), "type": "gap", **self._gap, "error": self.error}
            if not self._put(_line(record)):
                return self._back_off()
            self.seq += 1
            self._gap = None
        self.failing = False
        return None

    def give_up_kept(self) -> None:
        """The host ends while writes still fail: the events kept for a retry are lost too."""
        for _line_kept in self._kept:
            self._count_lost(0)
        self._kept.clear()
        self._kept_bytes = 0

    def _back_off(self) -> float:
        self._delay = min(self._delay * 2, RETRY_MAX_S)
        self._retry_at = time.monotonic() + self._delay
        return self._delay

    # ------------------------------------------------------------------ events

    def append(self, event_type: str, **fields: Any) -> int:
        if self.failing:
            self.retry()  # waiting events go first, so seqs stay in order in the file
        self.seq += 1
        record = {"seq": self.seq, "time": time.time(), "type": event_type}
        record.update({_camel(k): v for k, v in fields.items() if v is not None})
        data = fields.get("data")
        self._write(_line(record), keep=event_type != "output", data=data if isinstance(data, str) else None)
        return self.seq

    def output(self, data: bytes, hide: list[int] | None = None, echo_end: int | None = None) -> int:
        """`hide` and `echo_end` are what readers leave out of `data` (ADR 0007); None: nothing."""
        return self.append("output", data=data.decode("utf-8", "surrogateescape"), hide=hide, echo_end=echo_end)

    # ------------------------------------------------------------------ rotation (ADR 0015)

    def rotation_due(self) -> bool:
        """Past N bytes, N/2 of them after the checkpoint, with every write through (a failing
        log retries its own writes first), and not within the back-off of a failed rotation."""
        return (
            self.folder is not None
            and self.size >= self.segment_bytes
            and self.size - self.checkpoint_end >= self.segment_bytes // 2
            and not self.failing
            and time.monotonic() >= self._rotate_at
        )

    def rotate(self, checkpoint: bytes, cols: int, rows: int) -> bool:
        """Start a new events.jsonl: a header at `cols` x `rows`, then `checkpoint` (a VT byte
        stream that rebuilds the screen on a fresh one of that size) in `checkpoint` events.
        The current file stays as events.<seq>.jsonl; old ones beyond SEGMENTS_KEPT go. Any
        failure (a full disk) leaves the current file as it was, appended to as before, and
        the rotation is tried again after a back-off. True once rotated."""
        from agent_tty.storage import segments

        assert self.folder is not None
        seq, lines = self.seq, [self._header(cols, rows)]
        for start in range(0, len(checkpoint), CHECKPOINT_CHUNK):
            seq += 1
            data = checkpoint[start : start + CHECKPOINT_CHUNK].decode("utf-8", "surrogateescape")
            lines.append(_line({"seq": seq, "time": time.time(), "type": "checkpoint", "data": data}))
        try:
            folder = segments.open_folder(self.folder)
        except OSError as err:
            return self._rotation_failed(err)
        try:
            try:
                # The oldest go first: while the next file is written the disk holds K-1 old
                # files, the current one and the next, so (K+1) N plus a checkpoint at most.
                segments.prune(folder, SEGMENTS_KEPT - 1)
                fd = segments.write_next(folder, lines)
            except OSError as err:
                return self._rotation_failed(err)
            try:
                segments.swap_in_next(folder, self.seq)
            except OSError as err:
                os.close(fd)
                segments.discard_next(folder)
                return self._rotation_failed(err)
            size = sum(len(line) for line in lines)
            old, self._fd = self._fd, fd
            os.close(old)
            self.seq, self.size, self.checkpoint_end = seq, size, size
            self.rotations += 1
            self.rotate_error, self._rotate_delay = "", RETRY_FIRST_S
            try:
                segments.prune(folder, SEGMENTS_KEPT)
            except OSError:
                pass  # left for the next rotation
            return True
        finally:
            folder.close()

    def _rotation_failed(self, err: OSError) -> bool:
        return self.rotation_failed(f"{err.strerror or err} ({err.__class__.__name__})")

    def rotation_failed(self, reason: str) -> bool:
        """The rotation is tried again after a back-off (0.1 s doubling to 5 s)."""
        self.rotate_error = reason
        self._rotate_at = time.monotonic() + self._rotate_delay
        self._rotate_delay = min(self._rotate_delay * 2, RETRY_MAX_S)
        return False

    def close(self) -> None:
        if self.failing:
            self.retry(force=True)  # a last try: what still cannot be written is lost
        try:
            os.close(self._fd)
        except OSError:
            pass
