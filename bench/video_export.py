"""`record export` of a 10-minute, 20 MB session to webm, mp4 and gif, against asciicast (issue 28.3).

    .venv/bin/python bench/video_export.py [--minutes 10] [--mb 20] [--fps 10] [--formats webm,mp4,gif]

One ended session's event log is rewritten (as bench/eventlog.py grows one) into a timeline of
--minutes minutes holding --mb MB of output, timestamps as a host records them: a program that
redraws a full-screen status view (a clock, coloured bars, a scrolling list; top-like) every
~30 ms, with a 5-second pause every minute (capped to --max-idle's 2 s in the video). Each export
runs as a whole CLI process; a row is its wall time, the file's size, frames, the video's length,
and the ratios against the session's length and against `record export --format asciicast` of
the same log, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def cli(home: Path, *args: str) -> tuple[float, dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_TTY_")}
    env.update({"AGENT_TTY_HOME": str(home), "PYTHONPATH": str(ROOT)})
    start = time.perf_counter()
    done = subprocess.run([PYTHON, "-m", "agent_tty", "--json", *args], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{args} failed ({done.returncode}): {done.stdout}{done.stderr}")
    return elapsed, json.loads(done.stdout)["result"]


def frame(step: int, cols: int = 80, rows: int = 24) -> str:
    """One redraw of a top-like screen: a header with a clock, coloured bars, a scrolling list."""
    parts = ["\x1b[H", f"\x1b[1;44m bench {step:>8}  uptime {step * 0.03:10.2f}s".ljust(cols) + "\x1b[0m\r\n"]
    for row in range(1, 8):
        level = (step * (row + 3)) % 60
        colour = 31 + row % 6
        parts.append(f"cpu{row} \x1b[{colour}m" + "|" * level + "\x1b[0m" + " " * (60 - level) + f" {level:3d}%\x1b[K\r\n")
    for row in range(8, rows - 1):
        n = step + row
        parts.append(f"\x1b[2m{n:>8}\x1b[0m process-{n % 977:<4} \x1b[33m{(n * 7919) % 100000:>6} KiB\x1b[0m state S\x1b[K\r\n")
    parts.append(f"\x1b[7m q quit  {step % 10 * '.'}\x1b[0m\x1b[K")
    return "".join(parts)


def synthesize(log: Path, minutes: float, megabytes: float) -> int:
    """The log of a session of `minutes` that printed about `megabytes` MB: the host's header and
    end events kept, the output in between made here with the times a host records."""
    header, *rest = log.read_bytes().splitlines()
    ended = [json.loads(line) for line in rest if json.loads(line)["type"] in ("exit",)]
    started = json.loads(header)["startedAt"]
    target = int(megabytes * 1e6)
    per_event = len(json.dumps({"seq": 1, "time": started, "type": "output", "data": frame(1)}))
    events = max(1, target // per_event)
    busy = minutes * 60 - 5 * int(minutes)  # a 5 s pause each minute
    step_s = busy / events
    seq, now, size = 0, started + 0.05, 0
    with log.open("wb") as out:
        out.write(header + b"\n")
        for step in range(events):
            seq += 1
            if step and step % max(1, events // max(1, int(minutes))) == 0:
                now += 5.0
            now += step_s
            line = json.dumps({"seq": seq, "time": now, "type": "output", "data": frame(step)}, separators=(",", ":")).encode()
            out.write(line + b"\n")
            size += len(line) + 1
        for event in ended:
            seq += 1
            out.write(json.dumps({**event, "seq": seq, "time": now + 0.01}, separators=(",", ":")).encode() + b"\n")
    return events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--mb", type=float, default=20)
    parser.add_argument("--fps", type=int, default=10)
    parser.add_argument("--formats", default="webm,mp4,gif")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        home = tmp / "home"
        _t, created = cli(home, "create", "--", "sh", "-c", "echo the-end")
        sid = created["sessionId"]
        folder = home / "sessions" / sid
        deadline = time.monotonic() + 60
        while json.loads((folder / "session.json").read_text())["status"] != "exited":
            if time.monotonic() > deadline:
                raise SystemExit("the session did not end")
            time.sleep(0.1)
        events = synthesize(folder / "events.jsonl", args.minutes, args.mb)
        size = (folder / "events.jsonl").stat().st_size
        length = args.minutes * 60
        print(f"session: {length:.0f} s, event log {size / 1e6:.1f} MB, {events} output events, 80x24, --fps {args.fps}")
        cast_s, cast = cli(home, "record", "export", sid, "--format", "asciicast", "--out", str(tmp / "out.cast"))
        print(f"{'format':10} {'export s':>9} {'MB':>7} {'frames':>7} {'video s':>8} {'x session':>10} {'x asciicast':>12}")
        print(f"{'asciicast':10} {cast_s:9.1f} {cast['bytes'] / 1e6:7.2f} {'-':>7} {cast['duration']:8.1f} {cast_s / length:10.3f} {1:12.1f}")
        for fmt in args.formats.split(","):
            took, result = cli(home, "record", "export", sid, "--format", fmt, "--fps", str(args.fps), "--out", str(tmp / f"out.{fmt}"))
            print(
                f"{fmt:10} {took:9.1f} {result['bytes'] / 1e6:7.2f} {result['frames']:7d} {result['duration']:8.1f} "
                f"{took / length:10.3f} {took / cast_s:12.1f}"
            )
        cli(home, "gc")


if __name__ == "__main__":
    main()
