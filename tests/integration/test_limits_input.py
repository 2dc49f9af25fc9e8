"""Large input reaches the program whole, at its pace; above the limit it is refused up front
(issue 11, item 5)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, Cli

pytestmark = pytest.mark.integration
READER = str(REPO / "tests" / "fixtures" / "count_input.py")


def _body(size: int) -> bytes:
    line = b"0123456789abcdefghijklmnopqrstuvwxyz\xc3\xa9\xff ~\n"  # UTF-8, a byte that is not, and text
    return (line * (size // len(line) + 1))[:size]


@pytest.mark.parametrize("pause", ["0", "0.002"], ids=["fast-reader", "slow-reader"])
def test_a_paste_of_three_mib_reaches_the_program_whole(cli: Cli, tmp_path: Path, pause: str) -> None:
    # Over the host's 1 MiB request limit: once reported as a dead host (exit 6).
    sid = cli.create(sys.executable, READER, pause)["sessionId"]
    try:
        assert cli.run("wait", sid, "--text", "ready", "--timeout", "10s").code == 0
        body = _body(3 << 20)
        source = tmp_path / "paste.bin"
        source.write_bytes(body + b"END.")
        pasted = cli.run("paste", sid, "--file", str(source), timeout=180)
        assert pasted.code == 0, pasted.stdout + pasted.stderr
        assert pasted.result["bytes"] == len(body) + 4 and pasted.result["parts"] > 1
        expected = f"got {len(body)} {hashlib.sha256(body).hexdigest()[:16]}"
        assert cli.run("wait", sid, "--text", expected, "--timeout", "60s").code == 0
    finally:
        cli.run("destroy", sid)


def test_a_paste_over_the_limit_is_refused_before_anything_is_sent(cli: Cli, tmp_path: Path) -> None:
    sid = cli.create(sys.executable, READER)["sessionId"]
    try:
        source = tmp_path / "huge.bin"
        with open(source, "wb") as handle:
            handle.truncate((64 << 20) + 1)
        refused = cli.run("paste", sid, "--file", str(source))
        assert refused.code == 2 and refused.error["code"] == "INVALID_INPUT", refused.stdout
        assert "64 MiB" in refused.error["message"]
        events = [json.loads(line) for line in (cli.folder(sid) / "events.jsonl").read_text().splitlines()]
        assert not [e for e in events if e.get("type") == "input"]
    finally:
        cli.run("destroy", sid)


def test_a_paste_stream_that_stops_part_way_is_closed_before_the_next_input(cli: Cli) -> None:
    # A CLI that sent the first part of a bracketed paste and died: the next input (here a
    # `type`) must not land inside the open bracket, where a shell would never run it.
    from agent_tty.protocol import rpc

    reader = str(REPO / "tests" / "fixtures" / "echo_input.py")
    sid = cli.create(sys.executable, reader, "bracketed-paste")["sessionId"]
    try:
        assert cli.run("wait", sid, "--text", "ready", "--timeout", "10s").code == 0
        socket_path = cli.manifest(sid)["socketPath"]
        rpc.call(socket_path, {"op": "input", "kind": "paste", "data": "abc", "part": "first"}, session_id=sid)
        assert cli.run("type", sid, "x.").code == 0
        assert cli.run("wait", sid, "--text", "got", "--timeout", "10s").code == 0
        screen = cli.run("snapshot", sid).result["lines"]
        assert any(r"got b'\x1b[200~abc\x1b[201~x.'" in line for line in screen), screen
    finally:
        cli.run("destroy", sid)
