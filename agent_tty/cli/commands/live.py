"""The path of commands that a live host answers: check the status, then one RPC."""

from __future__ import annotations

from typing import Any

from agent_tty.cli.output import GLOBALS


def _open(session_id: str):  # type: ignore[no-untyped-def]
    from agent_tty.lifecycle.engine import engine_for

    engine = engine_for(GLOBALS.home)
    paths = engine.home.session(session_id)
    return engine, paths, engine.read_manifest(paths)


def _not_running(session_id: str, status: str):  # type: ignore[no-untyped-def]
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    return AgentTtyError(
        ErrorCode.SESSION_NOT_RUNNING, f"session {session_id} is {status}", sessionId=session_id, status=status
    )


def call_live(session_id: str, request: dict[str, Any], timeout: float | None = 5.0) -> dict[str, Any]:
    """An RPC to a commandable session's host; exit 4 when the session is not commandable."""
    from agent_tty.lifecycle.reconcile import reconcile
    from agent_tty.protocol import rpc
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode
    from agent_tty.protocol.status import policy

    engine, paths, manifest = _open(session_id)
    if not policy(manifest.status).commandable:
        raise _not_running(session_id, manifest.status.value)
    try:
        return rpc.call(engine.socket(manifest), request, timeout=timeout, session_id=session_id)
    except AgentTtyError as err:
        if err.code is not ErrorCode.HOST_UNREACHABLE:
            raise
        after = reconcile(engine, paths, engine.read_manifest(paths)).manifest
        if not policy(after.status).commandable:
            raise _not_running(session_id, after.status.value) from None
        raise


def call_live_or_none(session_id: str, request: dict[str, Any], timeout: float | None = 5.0):  # type: ignore[no-untyped-def]
    """The host's answer while it serves; None (with the session's folder) once the session
    ended, so the caller answers from the event log instead."""
    from agent_tty.lifecycle.reconcile import reconcile
    from agent_tty.protocol import rpc
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode
    from agent_tty.protocol.status import is_terminal

    engine, paths, manifest = _open(session_id)
    if not is_terminal(manifest.status):
        try:
            return rpc.call(engine.socket(manifest), request, timeout=timeout, session_id=session_id), paths
        except AgentTtyError as err:
            if err.code is not ErrorCode.HOST_UNREACHABLE:
                raise
            after = reconcile(engine, paths, engine.read_manifest(paths)).manifest
            if not is_terminal(after.status):
                raise
    return None, paths


def parse_timeout_ms(value: str | None, default_ms: int | None) -> int | None:
    """`--timeout`: a duration (`500ms`, `5s`, `2m`; a bare number is seconds); 0 means no limit."""
    from agent_tty.protocol.values import parse_duration_ms

    if value is None:
        return default_ms
    return parse_duration_ms(value, "--timeout") or None


def rpc_timeout(timeout_ms: int | None) -> float | None:
    return None if timeout_ms is None else timeout_ms / 1000 + 5.0


def read_input_file(path: str) -> str:
    """The text of a --file argument; bytes that are not UTF-8 pass through unchanged."""
    from agent_tty.protocol.errors import invalid

    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            return handle.read()
    except OSError as err:
        raise invalid(f"cannot read --file {path!r}: {err.strerror}", value=path) from None
