"""The path of commands that a live host answers: check the status, then one RPC."""

from __future__ import annotations

from typing import Any

from agent_tty.cli.output import GLOBALS


def call_live(session_id: str, request: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
    from agent_tty.lifecycle.engine import engine_for
    from agent_tty.lifecycle.reconcile import reconcile
    from agent_tty.protocol import rpc
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode
    from agent_tty.protocol.status import policy

    engine = engine_for(GLOBALS.home)
    paths = engine.home.session(session_id)
    manifest = engine.read_manifest(paths)

    def not_running(status: str) -> AgentTtyError:
        return AgentTtyError(
            ErrorCode.SESSION_NOT_RUNNING, f"session {session_id} is {status}", sessionId=session_id, status=status
        )

    if not policy(manifest.status).commandable:
        raise not_running(manifest.status.value)
    try:
        return rpc.call(manifest.socket_path, request, timeout=timeout, session_id=session_id)
    except AgentTtyError as err:
        if err.code is not ErrorCode.HOST_UNREACHABLE:
            raise
        after = reconcile(engine, paths, engine.read_manifest(paths)).manifest
        if not policy(after.status).commandable:
            raise not_running(after.status.value) from None
        raise
