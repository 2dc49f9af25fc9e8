"""`batch` against the same steps as separate commands, measured in the same run.

    .venv/bin/python bench/batch.py [--steps 10] [--rounds 5]

One bash session; each round sends STEPS pairs of `type 'echo WORD\n'` and a `wait --text WORD`
anchored at that input, once as one `agent-tty batch` process and once as separate
`agent-tty type` / `agent-tty wait --after-seq SEQ` processes (the same requests to the host,
the same matches: the word's first appearance after its input). Prints the median wall time of
each and their ratio; no pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = str(Path(sys.executable).with_name("agent-tty"))


def cli(env: dict[str, str], *args: str) -> dict:
    done = subprocess.run([CLI, "--json", *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{args[0]} failed ({done.returncode}): {done.stdout}{done.stderr}")
    return json.loads(done.stdout)["result"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10, help="type+wait pairs per round")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "AGENT_TTY_HOME": str(Path(tmp) / "home")}
        sid = cli(env, "create", "--env", "PS1=$ ", "--", "bash", "--norc", "--noprofile")["sessionId"]
        try:
            cli(env, "run", sid, "true")  # the shell is at its prompt
            batch_ms, separate_ms = [], []
            for round_ in range(options.rounds):
                steps = []
                for i in range(options.steps):
                    word = f"b{round_}x{i}"
                    steps += [{"kind": "type", "text": f"echo {word}\n"}, {"kind": "wait", "text": word, "timeout": 10}]
                start = time.perf_counter()
                cli(env, "batch", sid, json.dumps(steps))
                batch_ms.append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                for i in range(options.steps):
                    word = f"s{round_}x{i}"
                    seq = cli(env, "type", sid, f"echo {word}\n")["seq"]
                    cli(env, "wait", sid, "--text", word, "--after-seq", str(seq), "--timeout", "10s")
                separate_ms.append((time.perf_counter() - start) * 1000)
        finally:
            cli(env, "destroy", sid)
    ours, peer = statistics.median(batch_ms), statistics.median(separate_ms)
    print(f"{options.steps} type+wait pairs, median of {options.rounds} rounds")
    print(f"batch (one process)     {ours:9.1f} ms")
    print(f"separate commands       {peer:9.1f} ms  ({2 * options.steps} processes)")
    print(f"ratio batch/separate    {ours / peer:9.3f}")


if __name__ == "__main__":
    main()
