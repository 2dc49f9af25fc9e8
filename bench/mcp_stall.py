"""How long one large MCP call holds up the others: `list` every 50 ms while it is answered.

    .venv/bin/python bench/mcp_stall.py [--cols 1000 --rows 250] [--tool snapshot|text|screenshot]

A temp Home, one session whose screen is filled with a colour per cell, and `agent-tty mcp`
driven by JSON-RPC lines (no SDK client, so the client adds no validation of its own). It sends
the call (`snapshot`: structured; `text`: the text snapshot with scrollback; `screenshot`), then
`list` every 50 ms until the call's reply came, and prints the call's reply time and size and
the `list` latencies (worst, median, how many were later than 0.2 s). No pass/fail (ADR 0025).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

FILL = """
import sys, time
cols, rows = int(sys.argv[1]), int(sys.argv[2])
row = lambda y: "".join(f"\\x1b[3{(x + y) % 8};4{7 - (x + y) % 8}m{chr(65 + (x + y) % 26)}" for x in range(cols))
sys.stdout.write("\\x1b[H\\x1b[2J" + "\\r\\n".join(row(y) for y in range(rows - 1)) + "\\r\\n\\x1b[0mFIL" + "LED")
sys.stdout.flush()
time.sleep(3600)
"""
LIST_EVERY_S = 0.05
LATE_S = 0.2


class Server:
    """`agent-tty mcp` over its stdin/stdout, replies read by a thread as they arrive."""

    def __init__(self, home: str) -> None:
        ours = Path(sys.executable).with_name("agent-tty")
        self.process = subprocess.Popen(
            [str(ours), "mcp", "--home", home], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.replies: queue.Queue[tuple[float, dict[str, Any], int]] = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
        self.reply()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.replies.put((time.monotonic(), json.loads(line), len(line)))

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        with self._lock:
            self.process.stdin.write(json.dumps(message).encode() + b"\n")
            self.process.stdin.flush()

    def call(self, request_id: int, tool: str, arguments: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})

    def reply(self, timeout: float = 600) -> dict[str, Any]:
        return self.replies.get(timeout=timeout)[1]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(30)
        finally:
            if self.process.poll() is None:
                self.process.kill()  # ours
                self.process.wait()


def measure(server: Server, sid: str, tool: str) -> None:
    arguments: dict[str, Any] = {"session_id": sid}
    name = "screenshot" if tool == "screenshot" else "snapshot"
    if tool == "snapshot":
        arguments["structured"] = True
    if tool == "text":
        arguments["scrollback"] = True
    sent: dict[int, float] = {}
    done = threading.Event()

    def lister() -> None:
        request_id = 100
        while not done.is_set():
            sent[request_id] = time.monotonic()
            server.call(request_id, "list", {})
            request_id += 1
            time.sleep(LIST_EVERY_S)

    start = time.monotonic()
    server.call(10, name, arguments)
    thread = threading.Thread(target=lister)
    thread.start()
    latencies: list[float] = []
    answered = None
    while answered is None or len(latencies) < len(sent):
        at, reply, size = server.replies.get(timeout=600)
        if reply["id"] == 10:
            answered = (at - start, size, reply["result"])
            done.set()
            thread.join()
        else:
            latencies.append(at - sent[reply["id"]])
    took, size, result = answered
    outcome = result["content"][0]["text"][:100] if result.get("isError") else "ok"
    print(f"{name} ({tool}): answered in {took:.2f} s, {size / 1e6:.1f} MB: {outcome}")
    late = sum(1 for latency in latencies if latency > LATE_S)
    print(f"list x{len(latencies)}: worst {max(latencies):.2f} s, median {statistics.median(latencies) * 1000:.0f} ms, "
          f"{late} later than {LATE_S:g} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cols", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=250)
    parser.add_argument("--tool", choices=("snapshot", "text", "screenshot"), default="snapshot")
    options = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="at-bench-")
    home = os.path.join(folder, "home")
    server = Server(home)
    sid = None
    try:
        argv = [sys.executable, "-c", FILL, str(options.cols), str(options.rows)]
        server.call(1, "create", {"argv": argv, "cols": options.cols, "rows": options.rows})
        sid = server.reply()["result"]["structuredContent"]["sessionId"]
        server.call(2, "wait", {"session_id": sid, "text": "FILLED", "timeout": 60})
        server.reply()
        print(f"{options.cols}x{options.rows}, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        measure(server, sid, options.tool)
    finally:
        if sid is not None:
            server.call(99, "destroy", {"session_id": sid})
            while server.reply()["id"] != 99:
                pass
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
