"""The server's stdio: the SDK's transport, fed by our own reader of the client's stdin.

Two things the SDK's reader cannot do, done here before a line reaches it:
- **The client's end ends the server.** When stdin reaches EOF (the client exited or closed it),
  every `run` and `wait` in flight is cancelled (calls.cancel_long_calls) and the server exits once
  the other calls have answered, instead of serving a wait without a time-out for ever.
- **Every request is answered.** A lone surrogate escape (`"\\ud800"`) is valid JSON but no
  Unicode; pydantic's parser refuses the line and the SDK drops it without a reply, so the client
  would wait for ever. Such a request gets a JSON-RPC error naming what was wrong.
"""

from __future__ import annotations

import json
import re
import sys
from io import TextIOWrapper
from typing import Any

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import ErrorData, JSONRPCError

from agent_tty.mcp import calls

INVALID_PARAMS = -32602
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class ClientLines:
    """The client's stdin a line at a time, for the SDK's reader (`async for line in stdin`)."""

    def __init__(self) -> None:
        self._file = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        self.ended = anyio.Event()
        self.replies: Any = None
        """The SDK's write stream, once the transport is up: where our own answers go."""

    def __aiter__(self) -> ClientLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._file.readline()
            if not line:
                self.ended.set()
                raise StopAsyncIteration
            if _SURROGATE_ESCAPE.search(line) is None or not await self._refused(line):
                return line

    async def _refused(self, line: str) -> bool:
        """Answer a request that holds a lone surrogate, and say so; False for any other line."""
        try:
            message = json.loads(line)
        except ValueError:
            return False  # the SDK's reader reports it as it does any malformed line
        where = _not_unicode(message.get("params") if isinstance(message, dict) else None, "params")
        if where is None or self.replies is None:
            return False
        request_id = message.get("id")
        if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
            return True  # a notification: nothing to answer, nothing to do
        error = ErrorData(code=INVALID_PARAMS, message=f"invalid params: {where} is not Unicode text (a lone surrogate such as \\ud800)")
        await self.replies.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error)))
        return True


def _not_unicode(value: Any, path: str) -> str | None:
    """The path of the first string in `value` that is not Unicode (holds a lone surrogate)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _not_unicode(key, f"{path} key") or _not_unicode(item, f"{path}.{key}")
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _not_unicode(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


async def serve_stdio(lowlevel: Any) -> None:
    """Serve `lowlevel` (the MCPServer's low-level server) until the client's stdin ends and
    the calls that do not wait have answered."""
    lines = ClientLines()
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.replies = write_stream
        async with anyio.create_task_group() as group:

            async def end_with_the_client() -> None:
                await lines.ended.wait()
                calls.cancel_long_calls()

            group.start_soon(end_with_the_client)
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()
