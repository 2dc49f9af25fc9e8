"""Offline snapshot and export of a 50 MB event log, before and after streaming; a live host's
RSS while 50 MB flows through its session.

    .venv/bin/python bench/eventlog.py [--before 9117838] [--mb 50] [--tries 3]

`offline`: one ended session whose log is grown to --mb MB of coloured output lines as the host
writes them; `snapshot --scrollback`, `wait --text` and `record export --out` run as whole
processes, alternating the code at --before (a `git archive` of it in a temp dir, run by this
same interpreter) and this tree. Each row: the median wall time and the largest peak RSS of the
process (os.wait4's ru_maxrss).
`live`: a session whose program prints --mb MB; the host's VmRSS from /proc before the flood, at
its half (the scrollback is full by then) and once it is all in the log: flat from half to end.
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

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, str]:
    """Wall ms, peak RSS in MiB and stdout of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = (time.perf_counter() - start) * 1000
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {out.decode()}{err.decode()}")
    return elapsed, usage.ru_maxrss >> 10, out.decode()


def grow(log: Path, target: int) -> None:
    header, *rest = log.read_bytes().splitlines()
    events = [json.loads(line) for line in rest]
    seq, size, now = 0, len(header), time.time()
    with log.open("wb") as out:
        out.write(header + b"\n")
        while size < target:
            seq += 1
            data = "".join(f"\x1b[32mline {seq}.{i}\x1b[0m " + "abcdefghij" * 7 + "\r\n" for i in range(48))
            line = json.dumps({"seq": seq, "time": now, "type": "output", "data": data}, separators=(",", ":")).encode()
            out.write(line + b"\n")
            size += len(line) + 1
        for event in events:
            seq += 1
            out.write(json.dumps({**event, "seq": seq}, separators=(",", ":")).encode() + b"\n")


def cli(home: Path, code: Path, *args: str) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_TTY_")}
    env.update({"AGENT_TTY_HOME": str(home), "PYTHONPATH": str(code), "AGENT_TTY_SCREEN": "ghostty"})
    return [PYTHON, "-m", "agent_tty", "--json", *args], env


def wait_for(check, what: str, timeout: float = 120) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.1)


def offline(tmp: Path, before: Path, mb: int, tries: int) -> None:
    home = tmp / "home"
    argv, env = cli(home, ROOT, "create", "--", "sh", "-c", "echo the-end")
    sid = json.loads(run(argv, env, tmp)[2])["result"]["sessionId"]
    folder = home / "sessions" / sid
    wait_for(lambda: json.loads((folder / "session.json").read_text())["status"] == "exited", "exit")
    grow(folder / "events.jsonl", mb << 20)
    size = (folder / "events.jsonl").stat().st_size
    print(f"event log: {size / 1e6:.1f} MB, backend ghostty, {tries} tries each (median ms, peak RSS MiB)")
    ops = {
        "snapshot --scrollback": ("snapshot", sid, "--scrollback"),
        "wait --text": ("wait", sid, "--text", "the-end", "--timeout", "1"),
        "record export --out": ("record", "export", sid, "--out", str(tmp / "out.cast")),
    }
    print(f"{'operation':24} {'before ms':>10} {'MiB':>6} {'after ms':>10} {'MiB':>6}")
    for name, args in ops.items():
        samples: dict[str, list[tuple[float, int]]] = {"before": [], "after": []}
        for _ in range(tries):
            for label, code in (("before", before), ("after", ROOT)):
                argv, env = cli(home, code, *args)
                ms, peak, _out = run(argv, env, tmp)
                samples[label].append((ms, peak))
        cells = []
        for label in ("before", "after"):
            cells.append(f"{statistics.median(s[0] for s in samples[label]):10.0f} {max(s[1] for s in samples[label]):6d}")
        print(f"{name:24} {' '.join(cells)}")


def rss_kib(pid: int) -> tuple[int, int]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def live(tmp: Path, mb: int) -> None:
    home = tmp / "live"
    flood = f"sleep 2; yes 'a line of program output, about eighty columns wide........................' | head -c {mb << 20}; sleep 600"
    argv, env = cli(home, ROOT, "create", "--", "sh", "-c", flood)
    created = json.loads(run(argv, env, tmp)[2])["result"]
    sid, host = created["sessionId"], created["hostPid"]
    log = home / "sessions" / sid / "events.jsonl"
    try:
        time.sleep(1)
        start, _ = rss_kib(host)
        began = time.monotonic()
        # The log also holds the JSON framing: all the program's bytes are in once it passes mb MB.
        wait_for(lambda: log.stat().st_size >= (mb << 19), "half the flood", timeout=600)
        half, _ = rss_kib(host)
        wait_for(lambda: log.stat().st_size >= (mb << 20), "the flood", timeout=600)
        elapsed = time.monotonic() - began
        end, peak = rss_kib(host)
        print(f"live host: {log.stat().st_size / 1e6:.1f} MB through the session in {elapsed:.1f} s; host VmRSS "
              f"{start >> 10} MiB before, {half >> 10} MiB at half, {end >> 10} MiB after (VmHWM {peak >> 10} MiB)")
    finally:
        argv, env = cli(home, ROOT, "destroy", sid)
        run(argv, env, tmp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="9117838")
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--tries", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="agent-tty-bench-"))
    try:
        before = tmp / "before"
        before.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "agent_tty"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive.stdout, check=True)
        offline(tmp, before, args.mb, args.tries)
        live(tmp, args.mb)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
