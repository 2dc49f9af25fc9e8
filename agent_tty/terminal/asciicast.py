"""asciinema v2 recordings from the event log: output, resizes and markers."""

from __future__ import annotations

import codecs
import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agent_tty.protocol.errors import AgentTtyError
from agent_tty.storage.records import Event, EventLogHeader
from agent_tty.terminal.replay import open_log, output_bytes, shown_bytes

CHUNK = 1 << 20
"""Bytes of .cast lines gathered before they are handed to the writer."""


@dataclass
class CastStats:
    """What the export counted, complete once its chunks are all read."""

    events: int = 0
    duration: float = 0.0


def export_asciicast(
    files: list[Path], stats: CastStats, term: str = "xterm-256color", title: str | None = None
) -> Iterator[bytes]:
    """The .cast file's bytes, a chunk at a time, as the event log is read: an export of any
    size holds one chunk. `files`: the log's kept segments oldest first, then events.jsonl
    (segments.log_files). The first file's checkpoint is the recording's first output; later
    ones are skipped, as the output before them drew the same screen (ADR 0015). `stats` has
    the number of events and the duration at the end."""
    lines: list[str] = []
    size = 0
    # An incremental decoder joins a character split across two output events.
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    elapsed = 0.0
    for event, base, head in _events(files, term, title):
        if head is not None:
            lines.append(head)
        if event is None:
            continue
        elapsed = max(0.0, round(event.time - base, 6))
        line = None
        if event.type == "output" or event.type == "checkpoint":
            text = decoder.decode(output_bytes(event) if event.type == "checkpoint" else shown_bytes(event))
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


REDRAW = "\x1b[?1049l\x1b[0m\x1b[H\x1b[2J"
"""Before a checkpoint that follows missing events: the primary screen, cleared."""


def _events(files: list[Path], term: str, title: str | None) -> Iterator[tuple[Event | None, float, str | None]]:
    """Every event of the files in order, with the recording's time zero; the first carries
    the .cast header, made from the first file's header (a log of no events: None and it).
    A segment gone before it was opened (a live host pruned it meanwhile) is skipped: the
    next file starts with its own checkpoint, which is then the first. Seqs only go up: an
    event seen in an earlier file (a host that died between naming the old file and swapping
    in the new one) is skipped, and a later file's checkpoint is kept when the events before
    it are missing (a rotation during the export), drawn on a cleared screen."""
    base: float | None = None
    opened = 0
    last_seq = 0
    for index, path in enumerate(files):
        with contextlib.ExitStack() as stack:
            try:
                header, events = stack.enter_context(open_log(path))
            except AgentTtyError:
                if index < len(files) - 1 and not os.path.lexists(path):
                    continue
                raise
            opened += 1
            first_of_file, keeps_checkpoint = True, opened == 1
            for event in events:
                if event.seq <= last_seq:
                    continue
                if first_of_file and last_seq and event.seq != last_seq + 1 and event.type == "checkpoint":
                    keeps_checkpoint = True  # what came before it is missing: it redraws
                    event = event.replace(data=REDRAW + (event.data or ""))
                first_of_file = False
                if base is None:
                    # A rotated log's recording starts at its checkpoint, not at the session's start.
                    base = event.time if event.type == "checkpoint" else header.started_at
                    yield event, base, _head(header, base, term, title)
                elif event.type != "checkpoint" or keeps_checkpoint:
                    yield event, base, None
                last_seq = event.seq
    if base is None:
        with open_log(files[-1]) as (header, _no_events):
            yield None, header.started_at, _head(header, header.started_at, term, title)


def _head(header: EventLogHeader, base: float, term: str, title: str | None) -> str:
    head: dict[str, object] = {
        "version": 2,
        "width": header.cols,
        "height": header.rows,
        "timestamp": int(base),
        "env": {"TERM": term},
    }
    if title:
        head["title"] = title
    return json.dumps(head)
