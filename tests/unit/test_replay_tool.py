"""The replay tool's `until=` hold: it ends when a like call from another thread has landed, and
runs to its cap in a process that makes no such call (tests/replay/sitecustomize.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPLAY_DIR = Path(__file__).resolve().parents[1] / "replay"

# Run as `python SCRIPT create`: the replay tool names the process by its first argument.
TWO_WRITERS = """
import os, sys, threading, time
folder = sys.argv[2]
def write(name, delay):
    time.sleep(delay)
    path = os.path.join(folder, "." + name)
    with open(path, "w") as f:
        f.write(name)
    os.replace(path, os.path.join(folder, "record"))
first = threading.Thread(target=write, args=("first", 0))
first.start()
if sys.argv[3] == "two":
    second = threading.Thread(target=write, args=("second", 0.2))
    second.start()
    second.join()
first.join()
"""


def _run(tmp_path: Path, writers: str, cap_ms: int) -> tuple[str, str]:
    script = tmp_path / "writers.py"
    script.write_text(TWO_WRITERS)
    log = tmp_path / "replay.log"
    env = {
        **os.environ,
        "PYTHONPATH": str(REPLAY_DIR),
        "AGENT_TTY_REPLAY_HOLD": f"create:rename:/record:1:{cap_ms}:until=/record",
        "AGENT_TTY_REPLAY_LOG": str(log),
    }
    subprocess.run([sys.executable, str(script), "create", str(tmp_path), writers], env=env, check=True, timeout=60)
    return (tmp_path / "record").read_text(), log.read_text()


def test_a_held_rename_lands_after_the_one_another_thread_makes(tmp_path: Path) -> None:
    record, log = _run(tmp_path, "two", cap_ms=30000)
    assert record == "first"  # the held one landed last, over the later one
    assert " met " in log and "not met" not in log


def test_a_held_rename_runs_to_its_cap_when_no_other_comes(tmp_path: Path) -> None:
    record, log = _run(tmp_path, "one", cap_ms=300)
    assert record == "first"
    assert "not met" in log
