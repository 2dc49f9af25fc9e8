"""One tool call: the blocking API call in a worker thread, progress while it runs, errors as
tool errors with the contract's code.

The API blocks (socket RPCs, a wait of up to its timeout): it runs on anyio's worker threads so
the event loop keeps answering other calls, cancellations and pings (ADR 0019).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ContentBlock, TextContent

from agent_tty.protocol.errors import AgentTtyError, ErrorCode

PROGRESS_INTERVAL_S = 1.0
"""A long call (run, wait) reports progress this often when the client sent a progress token."""
LONG_CALL_THREADS = 256
"""Worker threads for the long calls (run, wait), apart from anyio's default 40 for the rest: a
wait without a time-out holds its thread until the text appears, and so does a cancelled one
(abandoned, not interrupted), so 40 of them would leave `list` and `destroy` queued for ever.
Past this many long calls at once, a new one waits for a thread; every other call still runs."""
_long_calls: list[anyio.CapacityLimiter] = []


_waiting: set[anyio.CancelScope] = set()
_client_gone: list[bool] = []


def cancel_long_calls() -> None:
    """The client is gone (stdin ended): cancel every run and wait in flight, and any that
    starts later; the other calls answer as they would."""
    _client_gone.append(True)
    for scope in list(_waiting):
        scope.cancel()


def _long_call_limiter() -> anyio.CapacityLimiter:
    if not _long_calls:  # made in the event loop, on first use
        _long_calls.append(anyio.CapacityLimiter(LONG_CALL_THREADS))
    return _long_calls[0]


def error_result(err: AgentTtyError) -> CallToolResult:
    """A tool error (isError): the contract's code and message first, then the error as JSON
    (code, message, details, exitCode), as the CLI's `--json` envelope carries it."""
    error = {"code": err.code.value, "message": err.message, "details": err.details, "exitCode": int(err.exit_code)}
    return CallToolResult(
        is_error=True,
        content=[
            TextContent(type="text", text=f"{err.code.value}: {err.message}"),
            TextContent(type="text", text=json.dumps({"error": error}, ensure_ascii=False, default=str)),
        ],
    )


def unexpected(err: BaseException) -> AgentTtyError:
    """A bug, reported as the CLI reports one: INTERNAL_ERROR with the type and text, no traceback."""
    return AgentTtyError(ErrorCode.INTERNAL_ERROR, f"{type(err).__name__}: {err}")


def ok_result(result: dict[str, Any], content: Sequence[ContentBlock] | None = None) -> CallToolResult:
    """The structured result, and the content a model reads: given blocks, else the result as JSON."""
    blocks = list(content) if content is not None else [TextContent(type="text", text=json.dumps(result, ensure_ascii=False))]
    return CallToolResult(content=blocks, structured_content=result)


async def call(
    ctx: Context,
    work: Callable[[], dict[str, Any]],
    *,
    content: Callable[[dict[str, Any]], Sequence[ContentBlock]] | None = None,
    total_s: float | None = None,
    what: str = "",
) -> CallToolResult:
    """Run `work` (blocking) in a worker thread; with `total_s` given (a long call), report
    progress every PROGRESS_INTERVAL_S while it runs (a no-op without the client's token)."""
    outcome: dict[str, Any] = {}

    def guarded() -> None:
        # Caught in the thread: nothing the API raises crosses the task group as an exception group.
        try:
            outcome["result"] = work()
        except AgentTtyError as err:
            outcome["error"] = err
        except Exception as err:  # never a traceback to the client (CLI-CONTRACT.md)
            if os.environ.get("AGENT_TTY_DEBUG") == "1":
                raise
            outcome["error"] = unexpected(err)

    done = anyio.Event()

    async def ticker() -> None:
        start = time.monotonic()
        while True:
            with anyio.move_on_after(PROGRESS_INTERVAL_S):
                await done.wait()
            if done.is_set():
                return
            elapsed = time.monotonic() - start
            limit = f" of {total_s:g} s" if total_s else ""
            await ctx.report_progress(round(elapsed, 3), total_s or None, f"{what}: {elapsed:.0f} s{limit}")

    # abandon_on_cancel: a cancelled call frees the client at once; the thread ends when the API
    # call does (its own timeout), its answer dropped.
    if total_s is None:
        await anyio.to_thread.run_sync(guarded, abandon_on_cancel=True)
    else:
        with anyio.CancelScope() as scope:
            _waiting.add(scope)
            if _client_gone:
                scope.cancel()
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(ticker)
                    try:
                        await anyio.to_thread.run_sync(guarded, abandon_on_cancel=True, limiter=_long_call_limiter())
                    finally:
                        done.set()
            finally:
                _waiting.discard(scope)
        if scope.cancelled_caught:
            return error_result(AgentTtyError(ErrorCode.HOST_TIMEOUT, f"{what}: cancelled, the client has gone"))
    if "error" in outcome:
        return error_result(outcome["error"])
    result = outcome["result"]
    return ok_result(result, content(result) if content is not None else None)
