"""Is a new session as quick for its first command as for its tenth, without a slower create?

    .venv/bin/python bench/first_command.py [--runs 20] [--program bash]

Per run: `agent-tty create -- PROGRAM` as a whole process (fork+exec to exit), then at once
ten `snapshot` RPCs over the host's socket (agent_tty.protocol.rpc, as a long-lived API
process would send them); also the first `agent-tty snapshot` CLI process after a second
create. Prints medians: create, first snapshot RPC, tenth, first CLI snapshot.
`--before TREE` (a checkout of the base commit's agent_tty, e.g. `git archive BASE agent_tty |
tar -x -C TREE`) alternates each run with sessions whose CLI and host import from TREE, so the
two columns share the machine's load. No pass/fail: numbers are for people.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import summary, timed  # noqa: E402

from agent_tty.protocol import rpc  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--program", default="bash")
    parser.add_argument("--before", help="a tree with the base commit's agent_tty/, run alternately")
    args = parser.parse_args()
    ours = Path(sys.executable).with_name("agent-tty")
    work = Path(tempfile.mkdtemp(prefix="att-fc-", dir="/tmp"))
    home = work / "home"
    names = ("create", "snapshot RPC #1", "snapshot RPC #10", "create (2nd)", "snapshot CLI #1")
    sides = {"this tree": {**os.environ, "AGENT_TTY_HOME": str(home)}}
    if args.before:
        sides["--before"] = {**os.environ, "AGENT_TTY_HOME": str(home), "PYTHONPATH": args.before}
    results = {side: {name: [] for name in names} for side in sides}
    env = sides["this tree"]
    try:
        for run in range(args.runs * len(sides)):
            side = list(sides)[run % len(sides)]
            env, figures = sides[side], results[side]
            ms, out = timed([str(ours), "--json", "create", "--", args.program], env)
            figures["create"].append(ms)
            sid = json.loads(out)["result"]["sessionId"]
            sock = json.loads((home / "sessions" / sid / "session.json").read_text())["socketPath"]
            for n in range(10):
                start = time.perf_counter()
                rpc.call(sock, {"op": "snapshot"}, session_id=sid)
                elapsed = (time.perf_counter() - start) * 1000
                if n == 0:
                    figures["snapshot RPC #1"].append(elapsed)
                elif n == 9:
                    figures["snapshot RPC #10"].append(elapsed)
            ms, out = timed([str(ours), "--json", "create", "--", args.program], env)
            figures["create (2nd)"].append(ms)
            second = json.loads(out)["result"]["sessionId"]
            figures["snapshot CLI #1"].append(timed([str(ours), "--json", "snapshot", second], env)[0])
            for session in (sid, second):
                timed([str(ours), "destroy", "--force", session], env)
            time.sleep(0.2)
    finally:
        if (home / "sessions").is_dir():
            for folder in (home / "sessions").iterdir():
                subprocess.run([str(ours), "destroy", "--force", folder.name], env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.runs} runs of `create -- {args.program}`, medians [min-max]")
    print(f"{'':20} " + "".join(f"{side:32}" for side in sides))
    for name in names:
        print(f"{name:20} " + "".join(f"{summary(results[side][name]):32}" for side in sides))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
