"""An ended session's snapshot, wait and export stream its event log: a 50 MB log is read in
constant memory (issue 11, item 10). Measured as the CLI process's own peak RSS (os.wait4)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Cli, wait_until

pytestmark = pytest.mark.integration

LOG_BYTES = 50 << 20
PEAK_MAX_KB = 120 << 10
"""The bound on a command's peak RSS: its start-up and a screen with full scrollback take
about 50 MB at 80 columns; reading the 50 MB log whole took 180 MB for a snapshot, 230 MB for an
export."""


def _grow(log: Path, target: int) -> int:
    """Rewrite an ended session's log as its header, `target` bytes of coloured output lines as
    the host writes them, then its own events: the number of output events added."""
    header, *rest = log.read_bytes().splitlines()
    events = [json.loads(line) for line in rest]
    seq, size, count, now = 0, len(header), 0, time.time()
    with log.open("wb") as out:
        out.write(header + b"\n")
        while size < target:
            seq += 1
            data = "".join(f"\x1b[32mline {seq}.{i}\x1b[0m " + "abcdefghij" * 7 + "\r\n" for i in range(48))
            line = json.dumps({"seq": seq, "time": now, "type": "output", "data": data}, separators=(",", ":")).encode()
            out.write(line + b"\n")
            size += len(line) + 1
            count += 1
        for event in events:
            seq += 1
            out.write(json.dumps({**event, "seq": seq}, separators=(",", ":")).encode() + b"\n")
    return count


SPAWN_AND_MEASURE = """
import os, sys
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ)
_pid, status, usage = os.wait4(pid, 0)
sys.stderr.write(f"\\nPEAK {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}\\n")
"""
"""A small interpreter starts the command and reports its peak. Started from the test process,
the command's ru_maxrss would include the test process's own RSS, which it has until it execs
(vfork shares the parent's memory): a pytest process grown by earlier tests past the bound
would fail this test with no change in the command."""


def _peak(cli: Cli, *args: str) -> tuple[dict, int]:  # type: ignore[type-arg]
    """The command's JSON reply and its peak RSS in KiB."""
    argv = [sys.executable, "-I", "-S", "-c", SPAWN_AND_MEASURE, *cli.command, "--json", *args]
    done = subprocess.run(argv, capture_output=True, text=True, env=cli.env({"AGENT_TTY_SCREEN": "ghostty"}), timeout=300)
    _label, peak, code = done.stderr.rstrip("\n").rsplit("\n", 1)[-1].split()
    assert done.returncode == 0 and int(code) == 0 and "Traceback" not in done.stderr, (done.stdout, done.stderr)
    return json.loads(done.stdout)["result"], int(peak)


@pytest.fixture
def big_log(cli: Cli) -> tuple[str, int]:
    pytest.importorskip("pyghostty")  # pyte parses 50 MB in minutes, not seconds
    sid = cli.create("sh", "-c", "echo the-end")["sessionId"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exit")
    return sid, _grow(cli.folder(sid) / "events.jsonl", LOG_BYTES)


def test_offline_snapshot_and_wait_stay_in_constant_memory(cli: Cli, big_log: tuple[str, int]) -> None:
    sid, _count = big_log
    snap, peak = _peak(cli, "snapshot", sid, "--scrollback")
    assert snap["source"] == "replay" and "the-end" in snap["lines"]
    assert len(snap["scrollback"]) == 10_000
    assert peak < PEAK_MAX_KB, f"snapshot peaked at {peak >> 10} MiB"
    waited, peak = _peak(cli, "wait", sid, "--text", "the-end", "--timeout", "1")
    assert waited["matched"] and waited["exitCode"] == 0
    assert peak < PEAK_MAX_KB, f"wait peaked at {peak >> 10} MiB"


def test_export_streams_to_its_file(cli: Cli, big_log: tuple[str, int], tmp_path: Path) -> None:
    sid, count = big_log
    out = tmp_path / "big.cast"
    exported, peak = _peak(cli, "record", "export", sid, "--out", str(out))
    assert peak < PEAK_MAX_KB, f"export peaked at {peak >> 10} MiB"
    assert exported["bytes"] == out.stat().st_size > LOG_BYTES // 2
    assert exported["events"] == count + 1  # and the end's own output
    with out.open("rb") as cast:
        assert json.loads(cast.readline())["version"] == 2
        assert json.loads(cast.readline())[2].startswith("\x1b[32mline 1.0")


def test_a_line_longer_than_the_limit_is_a_clear_error(cli: Cli) -> None:
    """A line no host writes (over 16 MiB) is REPLAY_FAILED naming it, never read whole."""
    sid = cli.create("sh", "-c", "echo short")["sessionId"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exit")
    log = cli.folder(sid) / "events.jsonl"
    header, *_rest = log.read_bytes().splitlines()
    huge = json.dumps({"seq": 1, "time": time.time(), "type": "output", "data": "x" * (17 << 20)}).encode()
    log.write_bytes(header + b"\n" + huge + b"\n")
    done = cli.run("snapshot", sid)
    assert done.code == 10 and done.error["code"] == "REPLAY_FAILED", done.stdout
    assert "events.jsonl:2: a line longer than 16777216 bytes" in done.error["message"]
    done = cli.run("record", "export", sid)
    assert done.code == 7 and done.error["code"] == "EXPORT_FAILED", done.stdout
    assert not (cli.folder(sid) / "artifacts" / "recording.cast").exists()
    assert not [p for p in (cli.folder(sid) / "artifacts").iterdir()], "a temp file was left"
