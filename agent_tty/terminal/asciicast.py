"""asciinema v2 recordings from the event log: output, resizes and markers."""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agent_tty.terminal.replay import open_log, shown_bytes

CHUNK = 1 << 20
"""Bytes of .cast lines gathered before they are handed to the writer."""


@dataclass
class CastStats:
    """What the export counted, complete once its chunks are all read."""

    events: int = 0
    duration: float = 0.0


def export_asciicast(
    events_path: Path, stats: CastStats, term: str = "xterm-256color", title: str | None = None
) -> Iterator[bytes]:
    """The .cast file's bytes, a chunk at a time, as the event log is read: an export of any
    size holds one chunk. `stats` has the number of events and the duration at the end."""
    with open_log(events_path) as (header, events):
        head: dict[str, object] = {
            "version": 2,
            "width": header.cols,
            "height": header.rows,
            "timestamp": int(header.started_at),
            "env": {"TERM": term},
        }
        if title:
            head["title"] = title
        lines = [json.dumps(head)]
        size = 0
        # An incremental decoder joins a character split across two output events.
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        elapsed = 0.0
        for event in events:
            elapsed = max(0.0, round(event.time - header.started_at, 6))
            line = None
            if event.type == "output":
                text = decoder.decode(shown_bytes(event))
                if text:
                    line = json.dumps([elapsed, "o", text], ensure_ascii=False)
            elif event.type == "resize" and event.cols and event.rows:
                line = json.dumps([elapsed, "r", f"{event.cols}x{event.rows}"])
            elif event.type == "marker":
                line = json.dumps([elapsed, "m", event.label or ""], ensure_ascii=False)
            if line is None:
                continue
            stats.events += 1
            lines.append(line)
            size += len(line)
            if size >= CHUNK:
                yield ("\n".join(lines) + "\n").encode("utf-8")
                lines, size = [], 0
        rest = decoder.decode(b"", final=True)
        if rest:
            lines.append(json.dumps([elapsed, "o", rest], ensure_ascii=False))
            stats.events += 1
        stats.duration = elapsed
        if lines:
            yield ("\n".join(lines) + "\n").encode("utf-8")
