"""gc's judgement of an ended group whose zombies stay in view, under a PID 1 that never reaps,
cgroup against autogroup in the same run (root: it needs unshare).

    .venv/bin/python bench/gc_zombies.py [--runs 20] [--crowd 2300] [--load 4]

Inside `unshare --pid --fork --mount-proc` with a non-reaping init, a session's program starts
50 children that outlive it by 0.3 s; they end as orphans of the init that never reaps them,
so the program's group is left with 50 zombies in view. For each mechanism, `gc --dry-run` is timed until it judges the session removable,
and the time of one such judgement is printed (median over the runs), beside `agent-tty list`
as the floor of a command that judges nothing, then one `destroy` of the session. `--crowd N` starts N sleeping processes in the
namespace first, so every /proc scan reads N more entries; `--load N` keeps N busy loops running
beside the judgement (the machine's load average rises by about N). linux_autogroup's cost is
its frozen judgements (FROZEN_JUDGEMENTS rounds of SIGSTOP, two scans, SIGCONT) before two
zombie-only scans read the group ended.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INNER = r"""
import json, os, subprocess, sys, time
at, runs, crowd, load = sys.argv[1].split(), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
extra = [subprocess.Popen(["sleep", "3600"]) for _ in range(crowd)]
extra += [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(load)]
program = "trap '' HUP; for i in $(seq 50); do sleep 0.3 & done; exit 0"
results = {}
for mechanism in ("linux_cgroup", "linux_autogroup"):
    env = {**os.environ, "AGENT_TTY_MECHANISM": mechanism, "AGENT_TTY_HOME": os.environ["WORK"] + "/" + mechanism}
    sid = json.loads(subprocess.run([*at, "--json", "create", "--", "sh", "-c", program], env=env, capture_output=True, text=True).stdout)["result"]["sessionId"]
    manifest = os.path.join(env["AGENT_TTY_HOME"], "sessions", sid, "session.json")
    while json.load(open(manifest))["status"] != "exited":
        time.sleep(0.05)
    gc, floor = [], []
    for _ in range(runs):
        start = time.perf_counter()
        out = json.loads(subprocess.run([*at, "--json", "gc", "--dry-run"], env=env, capture_output=True, text=True).stdout)
        gc.append((time.perf_counter() - start) * 1000)
        assert out["result"]["removedSessions"] == [sid], out
        start = time.perf_counter()
        subprocess.run([*at, "list"], env=env, capture_output=True)
        floor.append((time.perf_counter() - start) * 1000)
    start = time.perf_counter()
    gone = json.loads(subprocess.run([*at, "--json", "destroy", sid], env=env, capture_output=True, text=True).stdout)
    destroy = (time.perf_counter() - start) * 1000
    assert gone["ok"], gone
    zombies = sum(1 for p in os.listdir("/proc") if p.isdigit() and open(f"/proc/{p}/stat").read().rpartition(")")[2].split()[0] == "Z")
    results[mechanism] = {"gc": gc, "list": floor, "destroy": destroy, "zombies": zombies, "processes": len([p for p in os.listdir("/proc") if p.isdigit()])}
for process in extra:  # ours, by pid; the namespace ends with its init anyway
    process.kill()
    process.wait()
print(json.dumps(results))
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--crowd", type=int, default=0, help="sleeping processes to start in the namespace first")
    parser.add_argument("--load", type=int, default=0, help="busy loops to run beside the judgement")
    args = parser.parse_args()
    ours = Path(sys.executable).with_name("agent-tty")
    work = Path(tempfile.mkdtemp(prefix="agent-tty-bench-"))
    try:
        done = subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, str(ROOT / "tests/fixtures/nonreaping_init.py"),
             sys.executable, "-c", INNER, str(ours), str(args.runs), str(args.crowd), str(args.load)],
            env={**os.environ, "WORK": str(work)},
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    results = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"gc --dry-run of an ended group with zombies in view (non-reaping PID 1), {args.runs} runs, "
          f"{args.crowd} more processes, {args.load} busy loops")
    for mechanism, data in results.items():
        gc, floor = data["gc"], data["list"]
        print(
            f"{mechanism:16} gc {statistics.median(gc):7.1f} ms [{min(gc):.1f}-{max(gc):.1f}]"
            f"   list (floor) {statistics.median(floor):6.1f} ms   judgement ~{statistics.median(gc) - statistics.median(floor):5.1f} ms"
            f"   destroy {data['destroy']:7.1f} ms   zombies in view {data['zombies']}, processes {data['processes']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
