"""Start-up cost across typer releases: `version`, `list`, `inspect ID` and a usage error, per
install, in the same run (docs/adr/0011-typer-declares-click-parses.md).

Each side is an interpreter whose venv holds agent-tty and one typer release, e.g.:

    python3 -m venv /tmp/t-old && /tmp/t-old/bin/pip install -q 'typer==0.19.0' 'click==8.1.0' .
    python3 -m venv /tmp/t-new && /tmp/t-new/bin/pip install -q typer .
    .venv/bin/python bench/typer_range.py --side oldest=/tmp/t-old/bin/python --side newest=/tmp/t-new/bin/python

Add `--side before=PY` for an install of an earlier commit. The first side is the reference of
the ratios. Each side gets a temp Home with one live `bash` session made by its own CLI; the
sides alternate run by run (the first one alternating too) so machine noise hits all alike.
Sessions are destroyed and Homes removed at the end. Medians, min-max, ratio; no pass/fail.
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


def operations(sid: str) -> dict[str, tuple[list[str], int]]:
    """Name -> (argv, expected exit code)."""
    return {
        "version": (["version"], 0),
        "list": (["list"], 0),
        "inspect ID": (["inspect", sid], 0),
        "wait (usage error)": (["--json", "wait", sid], 2),
    }


def timed_exit(argv: list[str], env: dict[str, str], expected: int) -> float:
    if expected == 0:
        return timed(argv, env)[0]
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != expected:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}, expected {expected}: {done.stdout}{done.stderr}")
    return elapsed


def typer_version(python: str) -> str:
    code = "import importlib.metadata as m; print(m.version('typer'), m.version('click'))"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.split()
    return f"typer {out[0]}, click {out[1]}" if len(out) == 2 else "?"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--side", action="append", required=True, metavar="NAME=PYTHON")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    sides = dict(item.split("=", 1) for item in args.side)
    cli = {name: Path(python).with_name("agent-tty") for name, python in sides.items()}
    for name, path in cli.items():
        if not path.exists():
            raise SystemExit(f"{name}: {path} not found")
    work = Path(tempfile.mkdtemp(prefix="agent-tty-bench-"))
    env = {name: {**os.environ, "AGENT_TTY_HOME": str(work / name)} for name in sides}
    created: dict[str, str] = {}
    results: dict[str, dict[str, list[float]]] = {}
    order = list(sides)
    try:
        for name in sides:
            created[name] = timed([str(cli[name]), "create", "--", "bash"], env[name])[1]
        time.sleep(1.0)  # let the new hosts build their screens
        ops = {name: operations(created[name]) for name in sides}
        for name in sides:  # warm-up
            for argv, code in ops[name].values():
                for _ in range(3):
                    timed_exit([str(cli[name]), *argv], env[name], code)
        for index in range(args.runs):
            turn = order[index % len(order):] + order[: index % len(order)]
            for op in ops[order[0]]:
                for name in turn:
                    argv, code = ops[name][op]
                    results.setdefault(op, {n: [] for n in sides})[name].append(timed_exit([str(cli[name]), *argv], env[name], code))
    finally:
        for name, sid in created.items():
            subprocess.run([str(cli[name]), "destroy", sid], env=env[name], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)

    for name, python in sides.items():
        print(f"{name:8} {typer_version(python)}  ({python})")
    print(f"{args.runs} runs each; ratio against {order[0]}")
    print(f"{'operation':20} " + " ".join(f"{name:30}" for name in sides))
    for op, samples in results.items():
        reference = statistics.median(samples[order[0]])
        cells = [f"{summary(samples[name])} {statistics.median(samples[name]) / reference:4.2f}x" for name in sides]
        print(f"{op:20} " + " ".join(f"{cell:30}" for cell in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
