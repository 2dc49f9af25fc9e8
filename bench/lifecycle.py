"""Lifecycle speed, ours against tmux, measured in the same run.

    .venv/bin/python bench/lifecycle.py [--runs 20]

Times whole processes (fork+exec to exit) of the installed console script next to this
interpreter, against the matching tmux operations on a private tmux server:

    create-to-ready  agent-tty create -- bash       tmux new-session -d bash
    list             agent-tty list (N sessions)    tmux list-sessions
    inspect          agent-tty inspect ID           tmux display-message -p -t S ...
    destroy          agent-tty destroy ID           tmux kill-session -t S
    version          agent-tty version              tmux -V
    gc               agent-tty gc (nothing to do)   (no tmux peer)

Prints medians, min-max and the ratio ours/tmux. No pass/fail: numbers are for people.
Each new host builds its screen model right after it starts (CPU the machine spends either
way); the loop pauses 0.4 s after each create so that the other figures time the commands.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_table, timed  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--background-sessions", type=int, default=10, help="sessions alive while list runs")
    args = parser.parse_args()

    ours = Path(sys.executable).with_name("agent-tty")
    tmux = shutil.which("tmux")
    if not ours.exists():
        raise SystemExit(f"{ours} not found: install agent-tty into this interpreter's venv")
    if tmux is None:
        raise SystemExit("tmux not found (apt-get install tmux)")
    work = Path(tempfile.mkdtemp(prefix="agent-tty-bench-"))
    env = {**os.environ, "AGENT_TTY_HOME": str(work / "home")}
    tmux_socket = str(work / "tmux.sock")
    t = [tmux, "-S", tmux_socket, "-f", "/dev/null"]
    results: dict[str, dict[str, list[float]]] = {}

    def add(name: str, who: str, value: float) -> None:
        results.setdefault(name, {"ours": [], "tmux": []})[who].append(value)

    background: list[str] = []
    try:
        timed([*t, "new-session", "-d", "-s", "keepalive", "sleep", "3600"], env)
        for i in range(args.background_sessions):
            background.append(timed([str(ours), "create", "--", "sleep", "3600"], env)[1])
            timed([*t, "new-session", "-d", "-s", f"bg{i}", "sleep", "3600"], env)
        time.sleep(1.0)
        for run in range(args.runs):
            ms, sid = timed([str(ours), "create", "--", "bash"], env)
            add("create-to-ready", "ours", ms)
            # A new host builds its screen model (~155 ms of CPU for pyghostty) at its first idle
            # moment; let it settle so the next figures time the commands, not that build.
            time.sleep(0.4)
            add("create-to-ready", "tmux", timed([*t, "new-session", "-d", "-s", f"s{run}", "bash"], env)[0])
            add("list", "ours", timed([str(ours), "list"], env)[0])
            add("list", "tmux", timed([*t, "list-sessions"], env)[0])
            add("inspect", "ours", timed([str(ours), "inspect", sid], env)[0])
            add("inspect", "tmux", timed([*t, "display-message", "-p", "-t", f"s{run}", "#{session_name} #{pane_pid}"], env)[0])
            add("destroy", "ours", timed([str(ours), "destroy", sid], env)[0])
            add("destroy", "tmux", timed([*t, "kill-session", "-t", f"s{run}"], env)[0])
            add("version", "ours", timed([str(ours), "version"], env)[0])
            add("version", "tmux", timed([tmux, "-V"], env)[0])
            add("gc", "ours", timed([str(ours), "gc"], env)[0])
    finally:
        for sid in background:
            subprocess.run([str(ours), "destroy", "--force", sid], env=env, capture_output=True)
        subprocess.run([*t, "kill-server"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)

    print(f"agent-tty {ours} vs {tmux}; {args.runs} runs, {args.background_sessions} background sessions each")
    print_table(results, "tmux", "-")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
