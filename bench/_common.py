"""What the benchmarks share: timing a whole process and printing medians with ratios."""

from __future__ import annotations

import statistics
import subprocess
import time


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Wall-clock milliseconds of one process, fork+exec to exit, and its stdout."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stdout}{done.stderr}")
    return elapsed, done.stdout.strip()


def summary(samples: list[float]) -> str:
    digits = 3 if statistics.median(samples) < 10 else 1  # in-process calls take well under 1 ms
    return f"{statistics.median(samples):8.{digits}f} ms [{min(samples):.{digits}f}-{max(samples):.{digits}f}]"


def print_table(results: dict[str, dict[str, list[float]]], peer: str, no_peer: str = "-") -> None:
    print(f"{'operation':28} {'agent-tty':30} {peer:28} ratio")
    for name, samples in results.items():
        line = f"{name:28} {summary(samples['ours']):30} "
        if samples.get("tmux"):
            ratio = statistics.median(samples["ours"]) / statistics.median(samples["tmux"])
            line += f"{summary(samples['tmux']):28} {ratio:6.1f}x"
        else:
            line += no_peer
        print(line)
