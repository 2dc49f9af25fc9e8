"""How soon a `wait --text` (and `run`) answers after its text reaches the screen.

    .venv/bin/python bench/wait_latency.py [--runs 40]

Starts a session with the real CLI whose program prints a marker each time a line arrives on
a FIFO and then writes the CLOCK_MONOTONIC time of that print (system-wide on Linux) to a
second FIFO. For each run it sends a `wait --text MARKER` RPC over the host's socket
(agent_tty.protocol.rpc's connect and peer check), triggers the print a random 20-40 ms later (so the trigger falls
anywhere in the host's check cycle), and takes the time the answer arrives. Prints the median
and spread of answer - print; `run` is timed as a whole RPC round trip (`run true`).
No pass/fail: numbers are for people.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from agent_tty.protocol import rpc  # noqa: E402

PROGRAM = r"""
import os, sys, time
trigger, stamps = sys.argv[1], sys.argv[2]
with open(trigger) as t, open(stamps, "w") as s:
    for line in t:
        os.write(1, ("MARK-" + line.strip() + "-END\r\n").encode())
        s.write(repr(time.monotonic()) + "\n"); s.flush()
"""


def summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[int(len(ordered) * 0.9) - 1] if len(ordered) >= 10 else ordered[-1]
    return f"median {statistics.median(samples):6.2f} ms  p90 {p90:6.2f}  [{ordered[0]:.2f}-{ordered[-1]:.2f}]  n={len(samples)}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    ours = Path(sys.executable).with_name("agent-tty")
    work = Path(tempfile.mkdtemp(prefix="att-wl-", dir="/tmp"))
    env = {**os.environ, "AGENT_TTY_HOME": str(work / "home")}
    trigger, stamps = work / "trigger", work / "stamps"
    os.mkfifo(trigger)
    os.mkfifo(stamps)
    created = subprocess.run(
        [str(ours), "--json", "create", "--", sys.executable, "-c", PROGRAM, str(trigger), str(stamps)],
        env=env, capture_output=True, text=True, check=True,
    )
    sid = json.loads(created.stdout)["result"]["sessionId"]
    sock = json.loads((work / "home" / "sessions" / sid / "session.json").read_text())["socketPath"]
    waits: list[float] = []
    try:
        with open(trigger, "w") as to_program, open(stamps) as from_program:
            rpc.call(sock, {"op": "snapshot"}, session_id=sid)  # the screen model is built
            for run in range(args.runs):
                # Sent before the trigger from this thread: the wait is in place when the text comes.
                conn = rpc._connect(sock, 5.0, sid)
                rpc._check_peer(conn, sock, sid)
                conn.sendall(rpc.encode({"op": "wait", "text": f"MARK-{run}-END", "timeoutMs": 5000}))
                time.sleep(random.uniform(0.02, 0.04))
                to_program.write(f"{run}\n")
                to_program.flush()
                reply = b""
                while not reply.endswith(b"\n"):
                    reply += conn.recv(65536)
                answered = time.monotonic()
                conn.close()
                printed = float(from_program.readline())
                assert json.loads(reply)["result"]["matched"], reply
                waits.append((answered - printed) * 1000)
        # `run` on a shell: a whole round trip, marker included.
        shell = json.loads(subprocess.run([str(ours), "--json", "create", "--", "sh"], env=env, capture_output=True, text=True, check=True).stdout)["result"]["sessionId"]
        shell_sock = json.loads((work / "home" / "sessions" / shell / "session.json").read_text())["socketPath"]
        rpc.call(shell_sock, {"op": "run", "command": "true", "timeoutMs": 5000}, timeout=10, session_id=shell)
        runs: list[float] = []
        for _ in range(args.runs):
            start = time.monotonic()
            result = rpc.call(shell_sock, {"op": "run", "command": "true", "timeoutMs": 5000}, timeout=10, session_id=shell)
            runs.append((time.monotonic() - start) * 1000)
            assert result["completed"], result
    finally:
        for folder in (work / "home" / "sessions").iterdir():
            subprocess.run([str(ours), "destroy", "--force", folder.name], env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    if os.environ.get("BENCH_ALL"):
        print(" ".join(f"{w:.1f}" for w in waits))
    print(f"wait --text: print -> answer   {summary(waits)}")
    print(f"run true: RPC round trip       {summary(runs)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
