"""How requests and replies are framed: a request is bounded by what a host reads (1 MiB), a
reply by what a caller reads (64 MiB)."""

from __future__ import annotations

import json

import pytest

from agent_tty.protocol import rpc
from agent_tty.protocol.errors import AgentTtyError, ErrorCode


def test_a_reply_over_the_request_limit_is_encoded_whole() -> None:
    # A structured snapshot of 200x50 is ~1.3 MB: once refused as if it were a request, which
    # raised out of the host's reply and ended the host.
    result = {"cells": [["x" * 100] * 200] * 60}
    line = rpc.encode_reply({"ok": True, "result": result})
    assert len(line) > rpc.MAX_MESSAGE and line.endswith(b"\n")
    assert json.loads(line) == {"ok": True, "result": result}
    with pytest.raises(AgentTtyError) as raised:
        rpc.encode({"op": "input", "data": "x" * rpc.MAX_MESSAGE})
    assert raised.value.code is ErrorCode.INVALID_INPUT and raised.value.details["limit"] == rpc.MAX_MESSAGE


def test_a_reply_over_the_callers_limit_becomes_an_error_reply_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rpc, "MAX_REPLY", 1000)
    reply = json.loads(rpc.encode_reply({"ok": True, "result": {"text": "x" * 2000}}))
    assert reply["ok"] is False and reply["error"]["code"] == "PROTOCOL_ERROR"
    assert reply["error"]["details"]["limit"] == 1000 and reply["error"]["details"]["size"] > 2000
