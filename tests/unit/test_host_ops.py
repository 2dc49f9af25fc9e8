"""The host serves each op of the protocol with a handler of its own, and no other."""

from __future__ import annotations

import inspect

import pytest

from agent_tty.host.ops import Ops
from agent_tty.protocol import rpc
from agent_tty.protocol.errors import AgentTtyError, ErrorCode


def test_every_protocol_op_has_one_handler() -> None:
    handlers = {name for name, _ in inspect.getmembers(Ops, inspect.isfunction) if not name.startswith("_")} - {"dispatch"}
    assert handlers == set(rpc.OPS)
    assert len(rpc.OPS) == len(set(rpc.OPS))
    assert set(Ops(None).table) == set(rpc.OPS)  # type: ignore[arg-type]


@pytest.mark.parametrize("op", ["nosuch", None, ["ping"], "dispatch", "__init__"])
def test_an_op_outside_the_protocol_is_a_protocol_error(op: object) -> None:
    with pytest.raises(AgentTtyError) as raised:
        Ops(None).dispatch({"op": op}, None)  # type: ignore[arg-type]
    assert raised.value.code is ErrorCode.PROTOCOL_ERROR
