"""Terminal operations, ours against tmux, measured in the same run; and output throughput.

    .venv/bin/python bench/terminal.py [--runs 20] [--megabytes 10]

Times whole processes of the installed console script next to this interpreter:

    send-keys      agent-tty send-keys ID a             tmux send-keys -t S a
    type           agent-tty type ID text               tmux send-keys -t S -l text
    snapshot       agent-tty snapshot ID                tmux capture-pane -p -t S
    wait --text    agent-tty wait ID --text X (on screen)   tmux capture-pane -p (one look)

First snapshot after create: a new host builds its screen model (importing pyghostty) at its
first idle moment or at the first command that needs it, whichever comes first.
Throughput: a program writes N MB of coloured lines, then END; we take the time from its
last write to the first `snapshot` that shows END (polling), for each screen backend that
is installed. Prints medians, min-max and ratios. No pass/fail.
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

WRITER = r"""
import os, sys, time
line = b"\x1b[32mgreen\x1b[0m \x1b[1mbold\x1b[0m " + b"x" * 70 + b"\r\n"
total = int(float(sys.argv[1]) * 1_000_000)
out = sys.stdout.buffer
written = 0
while written < total:
    out.write(line * 100)
    written += len(line) * 100
out.write(b"END-OF-OUTPUT\r\n")
out.flush()
with open(sys.argv[2], "w") as f:
    f.write(str(time.time()))
time.sleep(600)
"""


def throughput(ours: Path, env: dict[str, str], work: Path, megabytes: float, backend: str) -> float:
    script = work / "writer.py"
    script.write_text(WRITER)
    stamp = work / f"last-write-{backend}"
    run_env = {**env, "AGENT_TTY_SCREEN": backend}
    sid = timed([str(ours), "create", "--", sys.executable, str(script), str(megabytes), str(stamp)], run_env)[1]
    try:
        while True:
            snap = subprocess.run([str(ours), "snapshot", sid], env=run_env, capture_output=True, text=True).stdout
            if "END-OF-OUTPUT" in snap:
                seen = time.time()
                break
            time.sleep(0.005)
        while not stamp.exists() or not stamp.read_text():
            time.sleep(0.005)
        return max(0.0, (seen - float(stamp.read_text())) * 1000)
    finally:
        subprocess.run([str(ours), "destroy", "--force", sid], env=run_env, capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--megabytes", type=float, default=10.0)
    args = parser.parse_args()
    ours = Path(sys.executable).with_name("agent-tty")
    tmux = shutil.which("tmux")
    if not ours.exists() or tmux is None:
        raise SystemExit("needs agent-tty installed next to this interpreter and tmux (apt-get install tmux)")
    work = Path(tempfile.mkdtemp(prefix="agent-tty-bench-"))
    env = {**os.environ, "AGENT_TTY_HOME": str(work / "home")}
    t = [tmux, "-S", str(work / "tmux.sock"), "-f", "/dev/null"]
    results: dict[str, dict[str, list[float]]] = {}

    def add(name: str, who: str, value: float) -> None:
        results.setdefault(name, {"ours": [], "tmux": []})[who].append(value)

    for _ in range(max(3, args.runs // 4)):
        created = timed([str(ours), "create", "--", "cat"], env)[1]
        add("first snapshot after create", "ours", timed([str(ours), "snapshot", created], env)[0])
        timed([str(ours), "destroy", created], env)
    sid = timed([str(ours), "create", "--", "cat"], env)[1]
    timed([*t, "new-session", "-d", "-s", "b", "cat"], env)
    time.sleep(0.5)
    try:
        timed([str(ours), "type", sid, "ready-marker\r"], env)
        timed([str(ours), "wait", sid, "--text", "ready-marker", "--timeout", "10s"], env)
        for _ in range(args.runs):
            add("send-keys", "ours", timed([str(ours), "send-keys", sid, "a"], env)[0])
            add("send-keys", "tmux", timed([*t, "send-keys", "-t", "b", "a"], env)[0])
            add("type", "ours", timed([str(ours), "type", sid, "text"], env)[0])
            add("type", "tmux", timed([*t, "send-keys", "-t", "b", "-l", "text"], env)[0])
            add("snapshot", "ours", timed([str(ours), "snapshot", sid], env)[0])
            add("snapshot", "tmux", timed([*t, "capture-pane", "-p", "-t", "b"], env)[0])
            add("wait --text", "ours", timed([str(ours), "wait", sid, "--text", "ready-marker", "--timeout", "5s"], env)[0])
            add("wait --text", "tmux", timed([*t, "capture-pane", "-p", "-t", "b"], env)[0])
        backends = ["ghostty", "pyte"]
        for backend in backends:
            if backend == "ghostty":
                import importlib.util

                if importlib.util.find_spec("pyghostty") is None:
                    continue
            size = args.megabytes if backend == "ghostty" else min(args.megabytes, 0.5)
            add(f"throughput {backend} {size:g} MB", "ours", throughput(ours, env, work, size, backend))
    finally:
        subprocess.run([str(ours), "destroy", "--force", sid], env=env, capture_output=True)
        subprocess.run([*t, "kill-server"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)

    print(f"agent-tty {ours} vs {tmux}; {args.runs} runs")
    print_table(results, "tmux", "(no tmux peer)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
