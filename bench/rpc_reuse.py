"""One RPC round trip: a fresh connection per call against one reused connection.

    .venv/bin/python bench/rpc_reuse.py [--runs 200]

Starts a session (`create -- cat`, so keys do nothing but echo) with the real CLI, then times
`ping`, `snapshot` and `keys` through `rpc.call` (connect, peer check, one request, close) and
through one `rpc.Connection` kept open. Prints medians. No pass/fail: numbers are for people.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from agent_tty.protocol import rpc  # noqa: E402

REQUESTS: dict[str, dict[str, Any]] = {
    "ping": {"op": "ping"},
    "snapshot": {"op": "snapshot"},
    "keys": {"op": "keys", "keys": ["a"]},
}


def ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:7.3f} ms"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    ours = Path(sys.executable).with_name("agent-tty")
    work = Path(tempfile.mkdtemp(prefix="att-rr-", dir="/tmp"))
    env = {**os.environ, "AGENT_TTY_HOME": str(work / "home")}
    created = subprocess.run([str(ours), "--json", "create", "--", "cat"], env=env, capture_output=True, text=True, check=True)
    sid = json.loads(created.stdout)["result"]["sessionId"]
    sock = json.loads((work / "home" / "sessions" / sid / "session.json").read_text())["socketPath"]
    has_connection = hasattr(rpc, "Connection")
    rows = []
    try:
        rpc.call(sock, {"op": "snapshot"}, session_id=sid)  # the screen model is built
        connection = rpc.Connection(sock, session_id=sid) if has_connection else None
        for name, request in REQUESTS.items():
            fresh: list[float] = []
            reused: list[float] = []
            for _ in range(args.runs):
                start = time.perf_counter()
                rpc.call(sock, request, session_id=sid)
                fresh.append(time.perf_counter() - start)
                if connection is not None:
                    start = time.perf_counter()
                    connection.request(request)
                    reused.append(time.perf_counter() - start)
            rows.append(f"{name:10} fresh {ms(fresh)}   reused {ms(reused) if reused else '     -'}")
        if connection is not None:
            connection.close()
    finally:
        subprocess.run([str(ours), "destroy", "--force", sid], env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.runs} calls each, medians")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
