"""CPU the live dashboard costs, idle and while the mirrored program prints, against peers run the same minute.

Idle: the dashboard (in an agent-tty session, so it has a terminal) watching three quiet
sessions, against `agent-tty list` run once a second (what `watch -n1 agent-tty list` costs).
Busy: the dashboard mirroring a program that prints a line every 10 ms, against that session's
own host, which reads the same output into its screen and log.

    .venv/bin/python bench/dashboard_idle.py [SECONDS]
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TTY = [str(Path(sys.executable).with_name("agent-tty"))]
TICK = os.sysconf("SC_CLK_TCK")


def cli(env: dict[str, str], *args: str) -> dict:  # type: ignore[type-arg]
    done = subprocess.run([*TTY, "--json", *args], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)["result"]


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def over(seconds: float, pid: int) -> float:
    start = cpu_s(pid)
    time.sleep(seconds)
    return cpu_s(pid) - start


def main() -> None:
    window = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    home = Path(tempfile.mkdtemp()) / "home"
    env = {**os.environ, "AGENT_TTY_HOME": str(home)}
    made = []
    try:
        for n in range(3):
            made.append(cli(env, "create", "--name", f"quiet{n}", "--", "sh", "-c", f"echo quiet {n}; exec sleep 3600")["sessionId"])
        dash = cli(env, "create", "--name", "dash", "--cols", "120", "--rows", "40", "--", *TTY, "dashboard")
        made.append(dash["sessionId"])
        cli(env, "wait", dash["sessionId"], "--text", "quiet 0", "--timeout", "20s")
        time.sleep(1)
        idle = over(window, dash["childPid"])

        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        end = time.monotonic() + window
        while time.monotonic() < end:
            subprocess.run([*TTY, "list"], env=env, capture_output=True, check=True)
            time.sleep(1)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        listing = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

        chatty = cli(env, "create", "--name", "chatty", "--", sys.executable, "-uc",
                     "import time\nn=0\nwhile True:\n    n+=1; print('line', n, 'x'*60); time.sleep(0.01)")
        made.append(chatty["sessionId"])
        subprocess.run([*TTY, "send-keys", dash["sessionId"], "G"], env=env, capture_output=True, check=True)
        cli(env, "wait", dash["sessionId"], "--text", "chatty", "--timeout", "20s")
        time.sleep(1)
        start_dash, start_host = cpu_s(dash["childPid"]), cpu_s(chatty["hostPid"])
        time.sleep(window)
        busy = cpu_s(dash["childPid"]) - start_dash
        host = cpu_s(chatty["hostPid"]) - start_host
    finally:
        for session_id in made:
            subprocess.run([*TTY, "destroy", "--force", session_id], env=env, capture_output=True)
        subprocess.run([*TTY, "gc"], env=env, capture_output=True)
    print(f"window {window:.0f} s, CPU seconds per minute (ratio: dashboard / peer)")
    print(f"idle   dashboard {idle * 60 / window:7.3f}   `agent-tty list` every 1 s {listing * 60 / window:7.3f}   {idle / listing:5.2f}x")
    print(f"busy   dashboard {busy * 60 / window:7.3f}   the session's own host      {host * 60 / window:7.3f}   {busy / host:5.2f}x")


if __name__ == "__main__":
    main()
