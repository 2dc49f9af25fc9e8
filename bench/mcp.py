"""`agent-tty mcp` tool round trips, beside the same operation through the Python API and tmux.

    .venv/bin/python bench/mcp.py [--calls 100]

One live `bash` session in a temp Home. For `snapshot` and `send_keys`, the median of N calls:

    mcp     ClientSession.call_tool over stdio to `agent-tty mcp` (the SDK's client, in process)
    api     agent_tty.api Session.snapshot() / send_keys() (in process, no MCP)
    tmux    `tmux capture-pane -p` / `tmux send-keys` processes on a tmux session of the same run

Prints medians, min-max and the MCP layer's own cost (mcp - api). No pass/fail; the target is
a median round trip of 5 ms or less.
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
from typing import Any

# This file is named mcp.py: with its folder first on sys.path (a script's), `import mcp` would
# find it instead of the SDK. Drop the folder, and take _common by its path.
BENCH = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]
sys.path.append(str(BENCH))
from _common import summary  # noqa: E402

import anyio  # noqa: E402

TARGET_MS = 5.0


def api_times(home: str, sid: str, calls: int) -> dict[str, list[float]]:
    from agent_tty.api import Client

    session = Client(home).session(sid)
    times: dict[str, list[float]] = {"snapshot": [], "send_keys": []}
    for _ in range(calls):
        start = time.perf_counter()
        session.snapshot()
        times["snapshot"].append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        session.send_keys("a")
        times["send_keys"].append((time.perf_counter() - start) * 1000)
    return times


async def mcp_times(home: str, env: dict[str, str], sid: str, calls: int) -> dict[str, list[float]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    ours = Path(sys.executable).with_name("agent-tty")
    params = StdioServerParameters(command=str(ours), args=["mcp", "--home", home], env=env)
    times: dict[str, list[float]] = {"snapshot": [], "send_keys": []}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()  # the client validates results against the listed schemas
        for name, arguments in (("snapshot", {"session_id": sid}), ("send_keys", {"session_id": sid, "keys": ["a"]})):
            await session.call_tool(name, arguments)  # warm: imports of the first call
            for _ in range(calls):
                start = time.perf_counter()
                result: Any = await session.call_tool(name, arguments)
                times[name].append((time.perf_counter() - start) * 1000)
                if result.is_error:
                    raise SystemExit(f"{name} failed: {result.content}")
    return times


def tmux_times(env: dict[str, str], calls: int) -> dict[str, list[float]]:
    if shutil.which("tmux") is None:
        return {}
    socket = f"bench-mcp-{os.getpid()}"
    base = ["tmux", "-L", socket]
    subprocess.run([*base, "new-session", "-d", "-s", "b", "-x", "80", "-y", "24", "bash --norc --noprofile"], env=env, check=True)
    try:
        times: dict[str, list[float]] = {"snapshot": [], "send_keys": []}
        for _ in range(calls):
            for name, argv in (("snapshot", ["capture-pane", "-p", "-t", "b"]), ("send_keys", ["send-keys", "-t", "b", "a"])):
                start = time.perf_counter()
                subprocess.run([*base, *argv], env=env, check=True, capture_output=True)
                times[name].append((time.perf_counter() - start) * 1000)
        return times
    finally:
        subprocess.run([*base, "kill-server"], env=env, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    ours = Path(sys.executable).with_name("agent-tty")
    with tempfile.TemporaryDirectory(prefix="bm-", dir="/tmp") as work:
        home = str(Path(work) / "home")
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_TTY_")}
        env["AGENT_TTY_HOME"] = home
        if os.environ.get("AGENT_TTY_MECHANISM"):
            env["AGENT_TTY_MECHANISM"] = os.environ["AGENT_TTY_MECHANISM"]
        created = subprocess.run([str(ours), "create", "--", "bash", "--norc", "--noprofile"], env=env, capture_output=True, text=True, check=True)
        sid = created.stdout.strip()
        try:
            subprocess.run([str(ours), "wait", sid, "--screen-stable-ms", "200"], env=env, capture_output=True, check=True)
            results = {
                "mcp": anyio.run(mcp_times, home, env, sid, args.calls),
                "api": api_times(home, sid, args.calls),
                "tmux": tmux_times(env, args.calls),
            }
        finally:
            subprocess.run([str(ours), "destroy", sid], env=env, capture_output=True)
    print(f"{args.calls} calls each, medians [min-max]; target: mcp <= {TARGET_MS:g} ms")
    print(f"{'operation':12} {'mcp (SDK client)':28} {'python api':28} {'tmux (process)':28} mcp-api")
    for name in ("snapshot", "send_keys"):
        row = [summary(results[kind][name]) if results[kind] else "-" for kind in ("mcp", "api", "tmux")]
        overhead = statistics.median(results["mcp"][name]) - statistics.median(results["api"][name])
        print(f"{name:12} {row[0]:28} {row[1]:28} {row[2]:28} {overhead:+.1f} ms")


if __name__ == "__main__":
    main()
