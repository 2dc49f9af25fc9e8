"""Replies of any allowed size arrive whole; a cut reply is an error, never parsed as whole."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
from pathlib import Path

import pytest

from agent_tty.protocol import rpc
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from tests.conftest import Cli

pytestmark = pytest.mark.integration


def test_a_structured_snapshot_and_screenshot_of_200x50_arrive_whole(cli: Cli) -> None:
    # ~1.5 MB of JSON: over the 1 MiB a reply was once cut at (exit 9, "malformed RPC message").
    sid = cli.create("sh", "-c", "seq 1 60; sleep 60", options=("--cols", "200", "--rows", "50"))["sessionId"]
    try:
        assert cli.run("wait", sid, "--text", "60", "--timeout", "10s").code == 0
        snap = cli.run("snapshot", sid, "--format", "structured")
        assert snap.code == 0 and len(json.dumps(snap.result, separators=(",", ":"))) > rpc.MAX_MESSAGE
        assert len(snap.result["cells"]) == 50 and len(snap.result["cells"][0]) == 200
        # From the host, which serves on: a host that died answering is replayed from its log,
        # and that answer alone looks whole.
        assert snap.result["source"] == "live", snap.result["source"]
        shot = cli.run("screenshot", sid)
        assert shot.code == 0 and Path(shot.result["path"]).stat().st_size == shot.result["bytes"]
        assert shot.result["source"] == "live" and cli.manifest(sid)["status"] == "running"
    finally:
        cli.run("destroy", sid)


def test_a_reply_cut_before_its_end_is_a_protocol_error() -> None:
    # A short folder of our own: a pytest tmp_path under a long TMPDIR overflows sun_path.
    folder = tempfile.mkdtemp(prefix="at-", dir="/tmp")
    path = os.path.join(folder, "h.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o600)
    server.listen(1)

    def answer_half() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        conn.sendall(b'{"ok": true, "result": {"lines": ["a", "b"')  # and the host dies
        conn.close()

    thread = threading.Thread(target=answer_half)
    thread.start()
    try:
        with pytest.raises(AgentTtyError) as raised:
            rpc.call(path, {"op": "snapshot"}, timeout=5)
        assert raised.value.code is ErrorCode.PROTOCOL_ERROR and "cut off" in raised.value.message
    finally:
        thread.join(5)
        server.close()
        shutil.rmtree(folder, ignore_errors=True)
