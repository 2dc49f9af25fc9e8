"""A terminal size past the limit is refused at every door, so no reply builds 10^8 cells (issue 11, item 3)."""

from __future__ import annotations

import json

import pytest

from agent_tty.protocol import rpc
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from tests.conftest import Cli

pytestmark = pytest.mark.integration


def test_a_size_past_the_limit_is_refused_at_every_door(cli: Cli) -> None:
    made = cli.run("create", "--cols", "1001", "--", "true")
    assert made.code == 2 and made.error["code"] == "INVALID_INPUT" and "1000" in made.error["message"], made.stdout
    sid = cli.create("sh", "-c", "echo ready; sleep 60")["sessionId"]
    assert cli.run("wait", sid, "--text", "ready", "--timeout", "10s").code == 0
    # The CLI: once accepted, one structured snapshot of 10000x10000 froze the host for minutes.
    for cols, rows, fragment in (("10000", "10000", "1000"), ("1000", "251", "250,000")):
        resized = cli.run("resize", sid, "--cols", cols, "--rows", rows)
        assert resized.code == 2, resized.stdout
        assert resized.error["code"] == "INVALID_INPUT" and fragment in resized.error["message"]
    # The host itself, for a CLI of another version that sends any size.
    with pytest.raises(AgentTtyError) as raised:
        rpc.call(cli.manifest(sid)["socketPath"], {"op": "resize", "cols": 10000, "rows": 10000}, timeout=10)
    assert raised.value.code is ErrorCode.INVALID_INPUT and "1000" in raised.value.message
    assert cli.run("resize", sid, "--cols", "1000", "--rows", "250").code == 0  # the largest allowed
    snap = cli.run("snapshot", sid)
    assert snap.code == 0 and (snap.result["cols"], snap.result["rows"]) == (1000, 250)
    assert cli.run("destroy", sid).code == 0
    # An ended session is replayed from its log: a log that names 10000x10000 (an old host
    # allowed it; a hostile edit) is refused before any screen is built.
    log = cli.folder(sid) / "events.jsonl"
    lines = log.read_text().splitlines()
    header = json.loads(lines[0])
    header["cols"] = header["rows"] = 10000
    log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    for command in (("snapshot", sid, "--format", "structured"), ("screenshot", sid), ("wait", sid, "--text", "ready")):
        done = cli.run(*command, timeout=30)
        assert done.code == 10, (command, done.stdout, done.stderr)
        assert done.error["code"] == "REPLAY_FAILED" and "10000x10000" in done.error["message"]
