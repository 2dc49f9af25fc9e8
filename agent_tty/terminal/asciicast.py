"""asciinema v2 recordings from the event log: output, resizes and markers."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

from agent_tty.terminal.replay import read_log, shown_bytes


def export_asciicast(events_path: Path, term: str = "xterm-256color", title: str | None = None) -> tuple[bytes, int, float]:
    """The .cast file's bytes, its number of events and its duration in seconds."""
    header, events = read_log(events_path)
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
    # An incremental decoder joins a character split across two output events.
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    count = 0
    elapsed = 0.0
    for event in events:
        elapsed = max(0.0, round(event.time - header.started_at, 6))
        if event.type == "output":
            text = decoder.decode(shown_bytes(event))
            if text:
                lines.append(json.dumps([elapsed, "o", text], ensure_ascii=False))
                count += 1
        elif event.type == "resize" and event.cols and event.rows:
            lines.append(json.dumps([elapsed, "r", f"{event.cols}x{event.rows}"]))
            count += 1
        elif event.type == "marker":
            lines.append(json.dumps([elapsed, "m", event.label or ""], ensure_ascii=False))
            count += 1
    rest = decoder.decode(b"", final=True)
    if rest:
        lines.append(json.dumps([elapsed, "o", rest], ensure_ascii=False))
        count += 1
    return ("\n".join(lines) + "\n").encode("utf-8"), count, elapsed
