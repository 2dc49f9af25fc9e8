"""The Python API against tmux, measured in the same run.

    .venv/bin/python bench/api.py [--runs 50] [--loops 20]

On one live session (bash), each call in-process through agent_tty.api, and the matching tmux
command as a process (tmux has no library; its client is what a program runs):

    send-keys          Session.send_keys("a")            tmux send-keys -t S a
    snapshot           Session.snapshot()                tmux capture-pane -p -t S
    wait (on screen)   Session.wait("ready")             tmux capture-pane -p -t S (one look)

The end-to-end loop, create -> run `echo` -> wait -> snapshot -> destroy, against tmux's
new-session -> send-keys -> capture-pane until the text shows -> kill-session (a tmux server
already running, as our Client's spare host is warm before each loop). First command after create: the first and
the tenth snapshot of new sessions, and create itself, with a spare host and without one.
Prints medians, min-max and ratios. No pass/fail.
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
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_table  # noqa: E402

SHELL = ["bash", "--norc", "--noprofile"]


def ms(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def tmux_loop(t: list[str], n: int) -> float:
    start = time.perf_counter()
    subprocess.run([*t, "new-session", "-d", "-s", f"l{n}", *SHELL], check=True)
    subprocess.run([*t, "send-keys", "-t", f"l{n}", f"echo loop-$((1+{n}))", "Enter"], check=True)
    while f"loop-{1 + n}\n" not in subprocess.run([*t, "capture-pane", "-p", "-t", f"l{n}"], capture_output=True, text=True).stdout:
        pass
    subprocess.run([*t, "kill-session", "-t", f"l{n}"], check=True)
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--loops", type=int, default=20)
    args = parser.parse_args()
    tmux = shutil.which("tmux")
    if tmux is None:
        raise SystemExit("needs tmux (apt-get install tmux)")
    from agent_tty.api import Client

    work = Path(tempfile.mkdtemp(prefix="agent-tty-bench-"))
    t = [tmux, "-S", str(work / "tmux.sock"), "-f", "/dev/null"]
    env = {"PS1": "$ "}
    results: dict[str, dict[str, list[float]]] = {}

    def add(name: str, who: str, value: float) -> None:
        results.setdefault(name, {"ours": [], "tmux": []})[who].append(value)

    subprocess.run([*t, "new-session", "-d", "-s", "b", *SHELL], check=True)
    client = Client(work / "home")
    client.warm_up(wait=30)
    try:
        session = client.create(SHELL, env=env)
        session.type("echo ready\n")
        session.wait("ready", timeout=10)
        subprocess.run([*t, "send-keys", "-t", "b", "echo ready", "Enter"], check=True)
        for _ in range(args.runs):
            add("send-keys", "ours", ms(lambda: session.send_keys("a")))
            add("send-keys", "tmux", ms(lambda: subprocess.run([*t, "send-keys", "-t", "b", "a"])))
            add("snapshot", "ours", ms(session.snapshot))
            add("snapshot", "tmux", ms(lambda: subprocess.run([*t, "capture-pane", "-p", "-t", "b"], capture_output=True)))
            add("wait (text on screen)", "ours", ms(lambda: session.wait("ready", timeout=5)))
            add("wait (text on screen)", "tmux", ms(lambda: subprocess.run([*t, "capture-pane", "-p", "-t", "b"], capture_output=True)))
        session.destroy()

        for n in range(args.loops):
            def loop() -> None:
                s = client.create(SHELL, env=env)
                s.run(f"echo loop-$((1+{n}))", timeout=10)
                s.wait(f"loop-{1 + n}", timeout=10)
                s.snapshot()
                s.destroy()

            client.warm_up(wait=30)  # the next spare is warm, as between an agent's tasks
            add("loop create..destroy", "ours", ms(loop))
            add("loop create..destroy", "tmux", tmux_loop(t, n))

        for spare in (True, False):
            label = "spare host" if spare else "no spare"
            other = Client(work / "home", spare_host=spare)
            for _ in range(max(5, args.loops // 2)):
                if spare:
                    other.warm_up(wait=30)
                time.sleep(0.5)
                created: list = []
                add(f"create ({label})", "ours", ms(lambda: created.append(other.create(SHELL, env=env))))
                s = created[0]
                add(f"1st snapshot ({label})", "ours", ms(s.snapshot))
                for _ in range(8):
                    s.snapshot()
                add(f"10th snapshot ({label})", "ours", ms(s.snapshot))
                s.destroy()
            other.close()
    finally:
        client.close()
        subprocess.run([*t, "kill-server"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)

    print(f"agent_tty.api (in-process, {sys.executable}) vs {tmux} (a process per command); {args.runs} runs, {args.loops} loops")
    print_table(results, "tmux", "(no tmux peer)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
