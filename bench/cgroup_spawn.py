"""linux_cgroup's start into the leaf: clone3(CLONE_INTO_CGROUP) against the migration write, same run.

    .venv/bin/python bench/cgroup_spawn.py [--runs 20] [--gap 0.4]

Needs a user that may make cgroup v2 leaves (root here). Two parts, each way interleaved with
the other so that the machine's load falls on both alike:

- in this process: a child started into a fresh leaf and waited for, `clone3` (born there) against
  `fork + write` (the child writes "0" to the leaf's cgroup.procs, as before ADR 0045); the
  write's own time is taken in the child with perf_counter. A pause of --gap seconds before each
  try: back-to-back migrations share one RCU grace period and look cheaper than a create's do.
- whole `agent-tty create -- true` processes (the CLI's probe, the host's probe and the spawn
  each start a child into a leaf) with AGENT_TTY_CGROUP_CLONE3 unset against `=0`, the same pause
  between creates (the previous host ends meanwhile).

Prints medians, min-max and the ratio clone3 / migration. No pass/fail: numbers are for people.
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
from _common import summary, timed  # noqa: E402


def child_into(leaf: Path, way: str) -> tuple[float, float | None]:
    """Milliseconds from before the fork to the child's end, and the child's write (fork only)."""
    from agent_tty_plugins.linux_cgroup import clone_into

    read, write = os.pipe()
    start = time.perf_counter()
    if way == "clone3":
        fd = os.open(leaf, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        pid = clone_into.fork_into(fd)
        if pid == 0:
            os._exit(0)
        os.close(fd)
    else:
        pid = os.fork()
        if pid == 0:
            began = time.perf_counter()
            with open(leaf / "cgroup.procs", "w") as handle:
                handle.write("0")
            os.write(write, f"{(time.perf_counter() - began) * 1000:.3f}".encode())
            os._exit(0)
    os.close(write)
    report = os.read(read, 64)
    os.close(read)
    os.waitpid(pid, 0)
    elapsed = (time.perf_counter() - start) * 1000
    return elapsed, float(report) if report else None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--gap", type=float, default=0.4, help="seconds between tries")
    args = parser.parse_args()

    from agent_tty_plugins.linux_cgroup import probe

    result, placement = probe()
    if placement is None:
        raise SystemExit(f"linux_cgroup cannot work here: {result.reason}")
    if result.details.get("start") != "clone3":
        raise SystemExit(f"clone3 cannot start a child into a leaf here: {result.details.get('start')}")
    ours = Path(sys.executable).with_name("agent-tty")
    work = Path(tempfile.mkdtemp(prefix="agent-tty-bench-"))
    leaf = placement.parent / f"bench-{os.getpid()}"
    leaf.mkdir()
    spawn: dict[str, list[float]] = {"clone3": [], "fork + write": []}
    writes: list[float] = []
    create: dict[str, list[float]] = {"clone3": [], "fork + write": []}
    try:
        for _ in range(args.runs):
            for way in spawn:
                time.sleep(args.gap)
                elapsed, written = child_into(leaf, way)
                spawn[way].append(elapsed)
                if written is not None:
                    writes.append(written)
        base = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_TTY_")}
        for _ in range(args.runs):
            for way in create:
                env = {**base, "AGENT_TTY_HOME": str(work / "home")}
                if way != "clone3":
                    env["AGENT_TTY_CGROUP_CLONE3"] = "0"
                time.sleep(args.gap)
                create[way].append(timed([str(ours), "create", "--", "true"], env)[0])
        timed([str(ours), "gc"], {**base, "AGENT_TTY_HOME": str(work / "home")})
    finally:
        leaf.rmdir()
        shutil.rmtree(work, ignore_errors=True)

    print(f"linux_cgroup, a child into its leaf ({args.runs} tries each, {args.gap} s apart; {ours})")
    print(f"{'':34} {'clone3':30} {'fork + write':30} ratio")
    for name, samples in (("child started, ended, reaped", spawn), ("agent-tty create -- true", create)):
        ratio = statistics.median(samples["clone3"]) / statistics.median(samples["fork + write"])
        print(f"{name:34} {summary(samples['clone3']):30} {summary(samples['fork + write']):30} {ratio:5.2f}x")
    print(f"{'the migration write alone':34} {'-':30} {summary(writes):30}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
