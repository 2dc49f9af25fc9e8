"""The host serves each op of the protocol with a handler of its own, and no other."""

from __future__ import annotations

from agent_tty.host.loop import Host
from agent_tty.protocol import rpc


def test_every_protocol_op_has_one_handler() -> None:
    handlers = {name.removeprefix("_op_") for name in dir(Host) if name.startswith("_op_")}
    assert handlers == set(rpc.OPS)
    assert len(rpc.OPS) == len(set(rpc.OPS))
