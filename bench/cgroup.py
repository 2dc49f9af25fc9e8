"""Fork-chain destroy, cgroup against autogroup, measured in the same run (root).

    .venv/bin/python bench/cgroup.py [--tries 20]

For each mechanism (pinned with AGENT_TTY_MECHANISM), each try creates a session whose program
starts a fork chain (tests/fixtures/fork_chain.py: every process forks its successor and ends
within ~2 ms) that ignores SIGHUP, then times `destroy` until it reports destroyed, and checks
whether the chain survived (its heartbeat file still changes 0.3 s later). Prints the median
time and the number of survivors. A surviving chain ends by itself after 3 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import timed  # noqa: E402

CHAIN = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "fork_chain.py"


def one_try(ours: Path, env: dict[str, str], beat: Path) -> tuple[float, bool]:
    program = f'trap "" HUP; {sys.executable} {CHAIN} {beat} 3 0.002 & wait'
    sid = timed([str(ours), "create", "--", "sh", "-c", program], env)[1]
    while not beat.exists():
        time.sleep(0.005)
    time.sleep(0.2)
    ms, _ = timed([str(ours), "destroy", sid], env)
    first = beat.read_text()
    time.sleep(0.3)
    survived = beat.read_text() != first
    if survived:
        time.sleep(3.0)  # the chain's own lifetime
    return ms, survived


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tries", type=int, default=20)
    args = parser.parse_args()
    ours = Path(sys.executable).with_name("agent-tty")
    work = Path(tempfile.mkdtemp(prefix="agent-tty-bench-"))
    results: dict[str, tuple[list[float], int]] = {}
    try:
        for mechanism in ("linux_cgroup", "linux_autogroup"):
            env = {**os.environ, "AGENT_TTY_HOME": str(work / mechanism), "AGENT_TTY_MECHANISM": mechanism}
            times, survivors = [], 0
            for index in range(args.tries):
                ms, survived = one_try(ours, env, work / f"beat-{mechanism}-{index}")
                times.append(ms)
                survivors += survived
            results[mechanism] = (times, survivors)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"fork-chain destroy, {args.tries} tries per mechanism ({ours})")
    for mechanism, (times, survivors) in results.items():
        print(
            f"{mechanism:16} destroy {statistics.median(times):7.1f} ms [{min(times):.1f}-{max(times):.1f}]"
            f"   chains that survived: {survivors}/{len(times)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
