"""The path of operations that a live host answers: check the status, then one RPC.

Every call reads the manifest again: nothing another process may change is cached, in a
command's one-shot process as in a long-lived Python client.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command ~2 ms at start-up (issue 26)
    from typing import Any

    from agent_tty.lifecycle.engine import Engine


def _open(engine: Engine, session_id: str):  # type: ignore[no-untyped-def]
    paths = engine.home.session(session_id)
    return paths, engine.read_manifest(paths)


def _not_running(session_id: str, status: str):  # type: ignore[no-untyped-def]
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    return AgentTtyError(
        ErrorCode.SESSION_NOT_RUNNING, f"session {session_id} is {status}", sessionId=session_id, status=status
    )


def call_live(engine: Engine, session_id: str, request: dict[str, Any], timeout: float | None = 5.0) -> dict[str, Any]:
    """An RPC to a commandable session's host; exit 4 when the session is not commandable."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode
    from agent_tty.protocol.status import policy

    paths, manifest = _open(engine, session_id)
    if not policy(manifest.status).commandable:
        raise _not_running(session_id, manifest.status.value)
    try:
        return engine.call_host(engine.socket(manifest), request, timeout, session_id)
    except AgentTtyError as err:
        if err.code is not ErrorCode.HOST_UNREACHABLE:
            raise
        from agent_tty.lifecycle.reconcile import reconcile  # only for a host that did not answer

        after = reconcile(engine, paths, engine.read_manifest(paths)).manifest
        if not policy(after.status).commandable:
            raise _not_running(session_id, after.status.value) from None
        raise


def call_live_or_none(engine: Engine, session_id: str, request: dict[str, Any], timeout: float | None = 5.0):  # type: ignore[no-untyped-def]
    """The host's answer while it serves; None (with the session's folder) once the session
    ended, so the caller answers from the event log instead."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode
    from agent_tty.protocol.status import is_terminal

    paths, manifest = _open(engine, session_id)
    if not is_terminal(manifest.status):
        try:
            return engine.call_host(engine.socket(manifest), request, timeout, session_id), paths
        except AgentTtyError as err:
            if err.code is not ErrorCode.HOST_UNREACHABLE:
                raise
            from agent_tty.lifecycle.reconcile import reconcile  # only for a host that did not answer

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


INPUT_MAX = 64 << 20
"""The most text one `type` or `paste` sends (characters; a file's bytes)."""
INPUT_CHUNK = 1 << 16
"""Characters a request carries: its JSON stays under the host's 1 MiB even when every
character is escaped (12 bytes for one outside the BMP)."""
INPUT_STALL_S = 30.0
"""How long one chunk may wait for the program to read what came before it."""


def _too_long(what: str, size: int):  # type: ignore[no-untyped-def]
    from agent_tty.protocol.errors import invalid

    return invalid(f"{what} is {size} characters; the most one input sends is {INPUT_MAX >> 20} MiB", limit=INPUT_MAX)


def text_chunks(text: str, what: str = "TEXT") -> list[str]:
    if len(text) > INPUT_MAX:
        raise _too_long(what, len(text))
    return [text[i : i + INPUT_CHUNK] for i in range(0, len(text), INPUT_CHUNK)] or [""]


def file_chunks(path: str):  # type: ignore[no-untyped-def]
    """A --file's text, a chunk at a time (bytes that are not UTF-8 pass through unchanged)."""
    from agent_tty.protocol.errors import invalid

    try:
        handle = open(path, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115 - `with` below; the open's own error first
    except OSError as err:
        raise invalid(f"cannot read --file {path!r}: {err.strerror}", value=path) from None
    with handle:
        size = os.fstat(handle.fileno()).st_size
        if size > INPUT_MAX:
            raise _too_long(f"--file {path!r}", size)
        sent = 0
        while True:
            try:
                chunk = handle.read(INPUT_CHUNK)
            except OSError as err:
                raise invalid(f"cannot read --file {path!r}: {err.strerror}", value=path) from None
            sent += len(chunk)
            if sent > INPUT_MAX:  # a file that grew, or a pipe
                raise _too_long(f"--file {path!r}", sent)
            if not chunk:
                return
            yield chunk


def send_input(engine: Engine, session_id: str, kind: str, chunks) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Input as one request, or streamed as parts: the host answers a part once the program
    has read what came before it, so a large paste goes at the program's pace."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    pending = iter(chunks)
    current = next(pending, "")
    following = next(pending, None)
    if following is None:
        return call_live(engine, session_id, {"op": "input", "kind": kind, "data": current})
    sent, parts, first = 0, 0, None
    while current is not None:
        part = "first" if parts == 0 else ("last" if following is None else "more")
        request = {"op": "input", "kind": kind, "data": current, "part": part}
        try:
            result = call_live(engine, session_id, request, timeout=INPUT_STALL_S)
        except AgentTtyError as err:
            if parts and err.code is ErrorCode.HOST_TIMEOUT:
                raise AgentTtyError(
                    ErrorCode.HOST_TIMEOUT,
                    f"the program read nothing more for {INPUT_STALL_S:g} s: {sent} bytes of the input were sent",
                    sessionId=session_id,
                    bytesSent=sent,
                ) from None
            raise
        first = result["seq"] if first is None else first
        sent += result["bytes"]
        parts += 1
        current, following = following, next(pending, None) if following is not None else None
    return {**result, "bytes": sent, "firstSeq": first, "parts": parts}


def read_input_file(path: str) -> str:
    """The text of a --file argument; bytes that are not UTF-8 pass through unchanged."""
    from agent_tty.protocol.errors import invalid

    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            return handle.read()
    except OSError as err:
        raise invalid(f"cannot read --file {path!r}: {err.strerror}", value=path) from None
