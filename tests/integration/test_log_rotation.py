"""A long-running chatty session has a bound on disk: past N MiB the host starts a new
events.jsonl with a checkpoint of the screen and keeps K older files (ADR 0015, issue 11
item 10). Its replayed snapshot and its export still show what the live host showed."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Cli, wait_until

pytestmark = pytest.mark.integration

SEGMENT_MB = 2
KEPT = 1
CHECKPOINT_MAX = 1 << 20
"""A checkpoint at 80x24: 10,000 rows of scrollback text, about 0.85 MB as JSON."""
SLACK = 256 << 10
"""The read that takes a file past N (64 KiB of output, a little more as JSON), once per file."""
BOUND = (KEPT + 1) * (SEGMENT_MB << 20) + CHECKPOINT_MAX + SLACK
"""(K+1) files of N MiB, and the next file's checkpoint while it is written."""
PUSHED = 16 << 20

CHATTY = f"""
import sys, time
line = 'x' * 60
for i in range({PUSHED} // 72):
    sys.stdout.write(f'line {{i:08d}} {{line}}\\n')
sys.stdout.write('\\x1b[1;33mCHATTY\\x1b[0m-DONE\\n')
sys.stdout.flush()
time.sleep(600)
"""


def _log_bytes(folder: Path) -> int:
    """All of the event log's files, each inode once (a segment is a second name of the log
    for the moment of the rotation)."""
    sizes: dict[int, int] = {}
    for name in os.listdir(folder):
        if name.startswith(("events", ".events")):
            try:
                info = os.lstat(folder / name)
            except FileNotFoundError:
                continue
            sizes[info.st_ino] = info.st_size
    return sum(sizes.values())


def _cast_screen(cast: Path, backend: str) -> list[str]:
    """The screen a player shows at the end of the recording."""
    from agent_tty.terminal.screen import open_screen

    lines = cast.read_text().splitlines()
    head = json.loads(lines[0])
    screen = open_screen(head["width"], head["height"], None, backend)
    for line in lines[1:]:
        _time, kind, data = json.loads(line)
        if kind == "o":
            screen.feed(data.encode())
    return screen.lines()


@pytest.mark.timeout(300)  # 16 MiB through the host: 2-3 s here, far more beside CI's other stages
def test_chatty_session_log_stays_under_its_bound(cli: Cli, tmp_path: Path) -> None:
    done = cli.run("create", "--", sys.executable, "-c", CHATTY, env={"AGENT_TTY_LOG_SEGMENT_MB": str(SEGMENT_MB)})
    assert done.code == 0, (done.stdout, done.stderr)
    sid = done.result["sessionId"]
    folder = cli.folder(sid)
    peak = 0
    looks = 0

    def finished() -> bool:
        nonlocal peak, looks
        peak = max(peak, _log_bytes(folder))
        if b"CHATTY" in (folder / "events.jsonl").read_bytes()[-4096:]:
            return True
        # When the last line's read is the one that makes the log rotate, events.jsonl then
        # holds only the checkpoint and the line is in the segment before it: ask the screen.
        looks += 1
        return looks % 20 == 0 and "CHATTY-DONE" in cli.run("snapshot", sid).result["text"]

    wait_until(finished, timeout=240, interval=0.05, what="the chatty program's last line")
    waited = cli.run("wait", sid, "--text", "CHATTY-DONE", "--timeout", "30000")
    assert waited.code == 0 and waited.result["matched"], waited.stdout
    peak = max(peak, _log_bytes(folder))
    assert peak < BOUND, f"the event log took {peak} bytes on disk, past its bound of {BOUND}"

    live = cli.run("snapshot", sid, "--scrollback").result
    cells = cli.run("snapshot", sid, "--format", "structured").result["cells"]
    assert live["source"] == "live" and "CHATTY-DONE" in live["text"]
    assert cli.run("signal", sid, "TERM").code == 0
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", timeout=30, what="exit")

    names = sorted(os.listdir(folder))
    segments = [n for n in names if n.startswith("events.") and n != "events.jsonl"]
    assert len(segments) == KEPT, names
    assert ".events.next.tmp" not in names
    first = json.loads((folder / "events.jsonl").read_text().splitlines()[1])
    assert first["type"] == "checkpoint"

    replayed = cli.run("snapshot", sid, "--scrollback").result
    assert replayed["source"] == "replay"
    for key in ("lines", "cursor", "scrollback", "cols", "rows"):
        assert replayed[key] == live[key], key
    assert cli.run("snapshot", sid, "--format", "structured").result["cells"] == cells

    out = tmp_path / "rec.cast"
    exported = cli.run("record", "export", sid, "--out", str(out))
    assert exported.code == 0, exported.stdout + exported.stderr
    assert _cast_screen(out, live["backend"]) == live["lines"]
    # The recording starts with the oldest kept segment: its checkpoint, then its output.
    oldest = [json.loads(line) for line in (folder / segments[0]).read_text().splitlines()[1:3]]
    cast = [json.loads(line) for line in out.read_text().splitlines()[1:3]]
    assert oldest[0]["type"] == "checkpoint" and cast[0][2] == oldest[0]["data"]
    assert oldest[1]["type"] == "output" and cast[1][2] == oldest[1]["data"]
