"""One RPC round trip: a fresh connection per call against one reused connection, over each
host transport (a Unix socket; the authenticated loopback port of docs/adr/0021).

    .venv/bin/python bench/rpc_reuse.py [--runs 200]

Starts a session per transport (`create -- cat`, so keys do nothing but echo) with the real CLI,
then times `ping`, `snapshot` and `keys` through `rpc.call` (connect, peer check or handshake,
one request, close) and through one `rpc.Connection` kept open. Prints medians and the loopback
port's ratio to the Unix socket. No pass/fail: numbers are for people.
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


def measure(ours: Path, transport: str, runs: int) -> dict[str, tuple[list[float], list[float]]]:
    """Medians' samples per request for one session whose host serves `transport`."""
    work = Path(tempfile.mkdtemp(prefix="att-rr-", dir="/tmp"))
    env = {**os.environ, "AGENT_TTY_HOME": str(work / "home"), "AGENT_TTY_TRANSPORT": transport}
    created = subprocess.run([str(ours), "--json", "create", "--", "cat"], env=env, capture_output=True, text=True, check=True)
    sid = json.loads(created.stdout)["result"]["sessionId"]
    sock = json.loads((work / "home" / "sessions" / sid / "session.json").read_text())["socketPath"]
    samples: dict[str, tuple[list[float], list[float]]] = {}
    try:
        rpc.call(sock, {"op": "snapshot"}, session_id=sid)  # the screen model is built
        connection = rpc.Connection(sock, session_id=sid)
        for name, request in REQUESTS.items():
            fresh: list[float] = []
            reused: list[float] = []
            for _ in range(runs):
                start = time.perf_counter()
                rpc.call(sock, request, session_id=sid)
                fresh.append(time.perf_counter() - start)
                start = time.perf_counter()
                connection.request(request)
                reused.append(time.perf_counter() - start)
            samples[name] = (fresh, reused)
        connection.close()
    finally:
        subprocess.run([str(ours), "destroy", "--force", sid], env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    ours = Path(sys.executable).with_name("agent-tty")
    # The Unix socket is the peer the loopback transport (Windows's, docs/adr/0021) is held to.
    unix = measure(ours, "unix", args.runs)
    loop = measure(ours, "loopback", args.runs)
    print(f"{args.runs} calls each, medians; loopback / unix in brackets")
    for name in REQUESTS:
        cells = []
        for kind, index in (("fresh", 0), ("reused", 1)):
            a, b = statistics.median(unix[name][index]), statistics.median(loop[name][index])
            cells.append(f"{kind} unix {a * 1000:6.3f} ms  loopback {b * 1000:6.3f} ms ({b / a:4.2f}x)")
        print(f"{name:9} " + "   ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
