"""Each hot CLI command against Python's floor (`python -c pass`) and tmux, in the same run.

    .venv/bin/python bench/cli_floor.py [--runs 21] [--sessions 100] [--before PYTHON]

Whole processes, fork+exec to exit, on one live `bash --norc` session: `send-keys`, `type`,
`snapshot`, `run 'true'`, `wait --text` (already on screen), `inspect`, `list` with
`--sessions` live sessions, `gc` with nothing to do, `--version`; tmux's nearest command for
each. `--before PYTHON`, the interpreter of another venv with the base commit installed
(`python3 -m venv B && B/bin/pip install "CHECKOUT[fast,cjk]"`), also runs every command with
that install's `agent-tty`, interleaved run by run with this one, so both columns share the
machine's load and both are installed alike (a PYTHONPATH tree would cost every import a stat). Prints medians and ratios to the floor (issue 26's
targets: 3x for the hot commands, 4x for list and inspect, 1.5x for --version). No pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _ms(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--before", help="the python of a venv holding the base commit's install")
    options = parser.parse_args()
    python = sys.executable
    cli = str(Path(python).with_name("agent-tty"))
    work = Path(tempfile.mkdtemp(prefix="cli-floor-"))
    env = {**os.environ, "AGENT_TTY_HOME": str(work / "home")}
    env.pop("PYTHONPATH", None)
    tmux = shutil.which("tmux")
    tmux_env = {**env, "TMUX_TMPDIR": str(work)}
    ids: list[str] = []
    try:
        for _ in range(options.sessions):
            done = subprocess.run([cli, "--json", "create", "--", "bash", "--norc"], env=env, capture_output=True, text=True, check=True)
            ids.append(json.loads(done.stdout)["result"]["sessionId"])
        sid = ids[0]
        subprocess.run([cli, "wait", sid, "--text", "bash-", "--timeout", "10s"], env=env, stdout=subprocess.DEVNULL, check=True)
        if tmux:
            subprocess.run([tmux, "new-session", "-d", "-s", "bench", "bash --norc"], env=tmux_env, check=True)
        ours = {
            "--version": ["--version"],
            "send-keys": ["send-keys", sid, "Enter"],
            "type": ["type", sid, " "],  # a space: the run that follows still reads `true`
            "snapshot": ["snapshot", sid],
            "run 'true'": ["run", sid, "true"],
            "wait --text": ["wait", sid, "--text", "bash-"],
            "inspect": ["inspect", sid],
            f"list ({options.sessions} live)": ["list"],
            "gc (nothing to do)": ["gc"],
        }
        peer = {
            "send-keys": ["send-keys", "-t", "bench", "Enter"],
            "type": ["send-keys", "-t", "bench", "-l", " "],
            "snapshot": ["capture-pane", "-p", "-t", "bench"],
            "inspect": ["display-message", "-p", "-t", "bench", "#{pane_pid}"],
            f"list ({options.sessions} live)": ["list-sessions"],
        }
        before_cli = str(Path(options.before).with_name("agent-tty")) if options.before else None
        floor: list[float] = []
        samples: dict[str, dict[str, list[float]]] = {name: {"now": [], "before": [], "tmux": []} for name in ours}
        for _ in range(options.runs):
            floor.append(_ms([python, "-c", "pass"], env))
            for name, args in ours.items():
                samples[name]["now"].append(_ms([cli, *args], env))
                if before_cli is not None:
                    samples[name]["before"].append(_ms([before_cli, *args], env))
                if tmux and name in peer:
                    samples[name]["tmux"].append(_ms([tmux, *peer[name]], tmux_env))
        base = statistics.median(floor)
        print(f"python -c pass: {base:.1f} ms (median of {options.runs}); ratios are to it")
        header = f"{'command':24} {'now':>9} {'x floor':>8}"
        if before_cli is not None:
            header += f" {'before':>9} {'x floor':>8}"
        print(header + f" {'tmux':>9}")
        for name, seen in samples.items():
            now = statistics.median(seen["now"])
            line = f"{name:24} {now:7.1f}ms {now / base:7.1f}x"
            if before_cli is not None:
                before = statistics.median(seen["before"])
                line += f" {before:7.1f}ms {before / base:7.1f}x"
            line += f" {statistics.median(seen['tmux']):7.1f}ms" if seen["tmux"] else f" {'-':>9}"
            print(line)
    finally:
        if tmux:
            subprocess.run([tmux, "kill-server"], env=tmux_env, stderr=subprocess.DEVNULL)
        for sid in ids:
            subprocess.run([cli, "destroy", sid], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
