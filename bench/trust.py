"""The cost of the Home trust checks on the hot commands, against a baseline, in the same run.

Every command now stat()s the Home, its ancestors, sessions/ and each session folder, and
opens records with O_NOFOLLOW + fstat. This times `list`, `list --all`, `inspect ID` and
`--json inspect ID` (whole processes, fork+exec to exit) of two installs side by side.

Make the baseline interpreter from the commit before the trust checks (0eef88e):

    git worktree add /tmp/agent-tty-base 0eef88e
    python3 -m venv /tmp/base-venv && /tmp/base-venv/bin/pip install -q /tmp/agent-tty-base
    .venv/bin/python bench/trust.py --baseline-python /tmp/base-venv/bin/python [--sessions 5] [--runs 30]

Each side gets its own temp Home with the same number of live `bash` sessions, made by its
own CLI (the `agent-tty` beside --python, default this interpreter, and beside
--baseline-python). After a warm-up the sides alternate run by run, and which goes first
alternates too, so machine noise hits both alike. The sessions are destroyed and the Homes
removed at the end, also on error. Prints medians, min-max and the ratio candidate/baseline.
No pass/fail: numbers are for people. If others reinstall this venv meanwhile (its
console script vanishes for a moment), point --python at a private venv.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import summary, timed  # noqa: E402

SIDES = ("candidate", "baseline")


def operations(sid: str) -> dict[str, list[str]]:
    return {
        "list": ["list"],
        "list --all": ["list", "--all"],
        "inspect ID": ["inspect", sid],
        "--json inspect ID": ["--json", "inspect", sid],
    }


def destroy(cli: Path, sid: str, env: dict[str, str]) -> bool:
    """End one session we created; retry while the console script is briefly gone (a reinstall)."""
    for _ in range(20):
        try:
            for argv in (["destroy", sid], ["destroy", "--force", sid]):
                if subprocess.run([str(cli), *argv], env=env, capture_output=True).returncode == 0:
                    return True
            return False
        except OSError:
            time.sleep(1.0)
    return False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline-python", required=True, help="interpreter with the baseline agent-tty")
    parser.add_argument("--python", default=sys.executable, help="interpreter with the candidate (default: this one)")
    parser.add_argument("--sessions", type=int, default=5, help="live bash sessions in each Home")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    cli = {"candidate": Path(args.python).with_name("agent-tty"), "baseline": Path(args.baseline_python).with_name("agent-tty")}
    for side, path in cli.items():
        if not path.exists():
            raise SystemExit(f"{side}: {path} not found: install agent-tty into that interpreter's venv")
    work = Path(tempfile.mkdtemp(prefix="agent-tty-bench-"))
    env = {side: {**os.environ, "AGENT_TTY_HOME": str(work / side)} for side in SIDES}
    created: dict[str, list[str]] = {side: [] for side in SIDES}
    results: dict[str, dict[str, list[float]]] = {}

    def run(side: str, argv: list[str]) -> float:
        return timed([str(cli[side]), *argv], env[side])[0]

    try:
        for side in SIDES:
            for _ in range(args.sessions):
                created[side].append(timed([str(cli[side]), "create", "--", "bash"], env[side])[1])
        # Each new host builds its screen model right after it starts; let that CPU settle.
        time.sleep(0.5 + 0.2 * args.sessions)
        ops = {side: operations(created[side][0]) for side in SIDES}
        for side in SIDES:  # warm-up: page cache, bytecode caches
            for argv in ops[side].values():
                for _ in range(3):
                    run(side, argv)
        load_before = os.getloadavg()
        for index in range(args.runs):
            order = SIDES if index % 2 == 0 else SIDES[::-1]
            for name in ops["candidate"]:
                for side in order:
                    results.setdefault(name, {s: [] for s in SIDES})[side].append(run(side, ops[side][name]))
        load_after = os.getloadavg()
    finally:
        left = [sid for side in SIDES for sid in created[side] if not destroy(cli[side], sid, env[side])]
        if left:
            print(f"could not destroy {' '.join(left)}; left {work} in place", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)

    print(f"candidate {cli['candidate']}\nbaseline  {cli['baseline']}")
    print(f"{args.runs} runs, {args.sessions} live sessions per Home; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after the timed runs")
    print(f"{'operation':20} {'candidate':30} {'baseline':30} ratio")
    for name, samples in results.items():
        ratio = statistics.median(samples["candidate"]) / statistics.median(samples["baseline"])
        print(f"{name:20} {summary(samples['candidate']):30} {summary(samples['baseline']):30} {ratio:5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
