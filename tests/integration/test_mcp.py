"""`agent-tty mcp`: the real server as a subprocess, driven by the MCP SDK's stdio client."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from tests.conftest import NOT_PINNED, Cli

pytestmark = [pytest.mark.integration, NOT_PINNED]

mcp = pytest.importorskip("mcp")

TOOLS = {
    "create", "list", "inspect", "destroy", "gc", "doctor", "run", "type", "paste", "send_keys",
    "mark", "resize", "signal", "wait", "snapshot", "screenshot", "record_export", "batch",
}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@asynccontextmanager
async def connected(cli: Cli) -> AsyncIterator[Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=cli.command[0], args=[*cli.command[1:], "mcp", "--home", str(cli.home)], env=cli.env())
    with open(cli.home.parent / "mcp-stderr.log", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session
    assert "Traceback" not in (cli.home.parent / "mcp-stderr.log").read_text()


def drive(cli: Cli, steps: Callable[[Any], Awaitable[None]]) -> None:
    async def main() -> None:
        async with connected(cli) as session:
            await steps(session)

    anyio.run(main)


async def ok(session: Any, tool: str, **arguments: Any) -> Any:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, [getattr(c, "text", c) for c in result.content]
    return result


def error_of(result: Any) -> dict[str, Any]:
    """The contract's error a tool error carries (its second text block, as JSON)."""
    assert result.is_error is True
    assert result.content[0].text.startswith(result.content[0].text.split(":")[0] + ": ")
    return json.loads(result.content[1].text)["error"]


def bash_argv() -> list[str]:
    return ["bash", "--norc", "--noprofile"]


def test_tools_listed_with_input_and_output_schemas(cli: Cli) -> None:
    async def steps(session: Any) -> None:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert TOOLS <= set(listed), TOOLS - set(listed)
        for name in TOOLS:
            tool = listed[name]
            assert tool.input_schema["type"] == "object", name
            assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
            assert tool.description and "  " not in tool.description and "\n" not in tool.description, (name, tool.description)
        wait = listed["wait"].input_schema["properties"]
        assert "seconds" in wait["timeout"]["description"].lower()
        assert {"text", "regex", "screen_stable_ms", "idle_ms", "exit", "after_seq", "output"} <= set(wait)
        assert listed["create"].input_schema["required"] == ["argv"]
        # Output schemas are the commands' result models (agent_tty.schema), not open objects.
        assert {"lines", "cols", "rows", "screenHash"} <= set(listed["snapshot"].output_schema["properties"])
        assert "path" in listed["screenshot"].output_schema["properties"]

    drive(cli, steps)


TOOLS_LIST_MAX_BYTES = 32 * 1024
"""The bound on tools/list's compact JSON (the tools as the client received them, nulls left out).
A client puts the list in its model's context on every turn. It was 53,051 bytes with pydantic's
full schemas (titles, the CLI's per-field prose in output schemas); published compact
(docs/adr/0034) it is ~26 KB: 32 KiB leaves room for a few more tools and parameters, and fails
well before the old size comes back."""
TOOL_MAX_BYTES = 4 * 1024
"""The bound on one tool (snapshot is the largest, ~3 KB; it was 6.7 KB): a schema that grows its
prose back fails here even while the total still fits."""


def compact_bytes(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def test_tools_list_stays_small_and_output_schemas_are_structure(cli: Cli) -> None:
    """issue 29.7: `list_tools` was 54 KB, most of it output schemas with a description and a
    title on every field, which no client validates and a model reads on every turn."""

    async def steps(session: Any) -> None:
        tools = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in (await session.list_tools()).tools]
        sizes = {tool["name"]: compact_bytes(tool) for tool in tools}
        total = compact_bytes({"tools": tools})
        print(f"tools/list: {total} bytes; per tool: {sizes}")
        assert total <= TOOLS_LIST_MAX_BYTES, (total, sizes)
        assert max(sizes.values()) <= TOOL_MAX_BYTES, sizes

        def keywords(schema: Any) -> set[str]:
            """Every keyword used in `schema` (the names under properties and $defs left out)."""
            if isinstance(schema, list):
                return set().union(*map(keywords, schema)) if schema else set()
            if not isinstance(schema, dict):
                return set()
            found = set(schema)
            for key, value in schema.items():
                if key in ("properties", "$defs"):
                    found |= set().union(*map(keywords, value.values())) if value else set()
                elif key not in ("enum", "const", "required", "default"):
                    found |= keywords(value)
            return found

        for tool in tools:
            assert not {"title", "description"} & keywords(tool["outputSchema"]), tool["name"]
            assert "title" not in keywords(tool["inputSchema"]), tool["name"]
        listed = {tool["name"]: tool for tool in tools}
        # What the output schemas no longer say about a result is in the description a model reads.
        assert "exitStatus" in listed["run"]["description"] and "64 KiB" in listed["run"]["description"]
        assert "64 KiB" in listed["wait"]["inputSchema"]["properties"]["output"]["description"]
        assert "20,000 cells" in listed["snapshot"]["inputSchema"]["properties"]["structured"]["description"]

    drive(cli, steps)


def test_create_run_wait_snapshot_screenshot_destroy(cli: Cli) -> None:
    async def steps(session: Any) -> None:
        created = (await ok(session, "create", argv=bash_argv(), env={"PS1": "$ "})).structured_content
        sid = created["sessionId"]
        assert created["status"] == "running"
        ran = (await ok(session, "run", session_id=sid, command="printf 'hel%s\\n' lo")).structured_content
        assert ran["completed"] is True and ran["exitStatus"] == 0 and ran["output"] == "hello\n"
        waited = (await ok(session, "wait", session_id=sid, text="hello", timeout=5)).structured_content
        assert waited["matched"] is True

        snap = await ok(session, "snapshot", session_id=sid)
        assert "hello" in snap.structured_content["lines"]
        assert snap.content[0].type == "text" and "hello" in snap.content[0].text.splitlines()

        shot = await ok(session, "screenshot", session_id=sid)
        image = next(block for block in shot.content if block.type == "image")
        assert image.mime_type == "image/png"
        assert base64.b64decode(image.data).startswith(PNG_SIGNATURE)
        assert shot.structured_content["path"].endswith(".png")
        assert (cli.folder(sid) / "artifacts").is_dir()

        listed = (await ok(session, "list")).structured_content
        assert sid in json.dumps(listed)
        ended = (await ok(session, "destroy", session_id=sid)).structured_content
        assert ended["destroyed"] is True and ended["sessionId"] == sid
        assert cli.manifest(sid)["status"] == "destroyed"

    drive(cli, steps)


def test_tool_errors_carry_the_contract_code(cli: Cli) -> None:
    async def steps(session: Any) -> None:
        missing = await session.call_tool("snapshot", {"session_id": "nosuchsession"})
        error = error_of(missing)
        assert error["code"] == "SESSION_NOT_FOUND" and error["exitCode"] == 3
        assert missing.content[0].text.startswith("SESSION_NOT_FOUND: ")
        assert error["details"]["sessionId"] == "nosuchsession"

        for ref in ("../x", "no-such-name"):
            assert error_of(await session.call_tool("snapshot", {"session_id": ref}))["code"] == "SESSION_NOT_FOUND"
        bad_arguments = error_of(await session.call_tool("snapshot", {}))
        assert bad_arguments["code"] == "USAGE" and "session_id" in bad_arguments["message"]
        assert error_of(await session.call_tool("no_such_tool", {}))["code"] == "USAGE"

        sid = (await ok(session, "create", argv=bash_argv())).structured_content["sessionId"]
        bad_key = error_of(await session.call_tool("send_keys", {"session_id": sid, "keys": ["NoSuchKey"]}))
        assert bad_key["code"] == "INVALID_INPUT"
        two = error_of(await session.call_tool("wait", {"session_id": sid, "text": "a", "exit": True}))
        assert two["code"] == "INVALID_INPUT"
        await ok(session, "destroy", session_id=sid)

        # An ended session's screen is judged in the server's worker thread: a runaway pattern
        # still stops at its budget there, as an error, and the server serves on.
        ended = (await ok(session, "create", argv=["printf", "a" * 40 + "!"])).structured_content["sessionId"]
        await ok(session, "wait", session_id=ended, exit=True, timeout=10)
        runaway = error_of(await session.call_tool("wait", {"session_id": ended, "regex": "(a+)+$", "timeout": 5}))
        assert runaway["code"] == "INVALID_INPUT" and runaway["details"]["budgetMs"] == 250, runaway
        assert (await ok(session, "inspect", session_id=ended)).structured_content["status"] in ("exited", "destroyed")

    drive(cli, steps)


def test_long_wait_reports_progress_and_does_not_block_other_calls(cli: Cli) -> None:
    async def steps(session: Any) -> None:
        sid = (await ok(session, "create", argv=bash_argv())).structured_content["sessionId"]
        typed = (await ok(session, "run", session_id=sid, command="sleep 4; echo DO''NE", wait=False)).structured_content
        progress: list[tuple[float, float | None, str | None]] = []
        quick: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total, message))

        async def long_wait() -> Any:
            return await session.call_tool(
                "wait", {"session_id": sid, "text": "DONE", "after_seq": typed["seq"], "timeout": 20}, progress_callback=on_progress
            )

        async def meanwhile() -> None:
            await anyio.sleep(0.5)  # the wait is in flight
            start = time.monotonic()
            await ok(session, "snapshot", session_id=sid)
            quick.append(time.monotonic() - start)

        results: dict[str, Any] = {}

        async def keep(name: str, work: Callable[[], Awaitable[Any]]) -> None:
            results[name] = await work()

        async with anyio.create_task_group() as group:
            group.start_soon(keep, "wait", long_wait)
            group.start_soon(meanwhile)
        waited = results["wait"]
        assert not waited.is_error and waited.structured_content["matched"] is True
        assert len(progress) >= 2, progress  # a wait of ~4 s, a report every second
        values = [value for value, _total, _message in progress]
        assert values == sorted(values) and all(total == 20 for _value, total, _message in progress)
        assert quick and quick[0] < 1.0, quick  # the event loop answered while the wait blocked a thread
        await ok(session, "destroy", session_id=sid)

    drive(cli, steps)


def test_every_other_tool_answers_with_its_result(cli: Cli) -> None:
    async def steps(session: Any) -> None:
        sid = (await ok(session, "create", argv=bash_argv(), name="shell", cols=100, rows=30)).structured_content["sessionId"]
        assert (await ok(session, "inspect", session_id=sid)).structured_content["name"] == "shell"
        # A tool takes the session's name, or a prefix of its id, as the CLI does.
        assert (await ok(session, "inspect", session_id="shell")).structured_content["sessionId"] == sid
        await ok(session, "type", session_id="shell", text="echo typ")
        await ok(session, "paste", session_id=sid[:6], text="ed")
        await ok(session, "send_keys", session_id="shell", keys=["Enter"])
        assert (await ok(session, "wait", session_id=sid, text="typed", output=True, timeout=5)).structured_content["matched"]
        marked = (await ok(session, "mark", session_id=sid, label="here")).structured_content
        assert isinstance(marked["seq"], int)
        await ok(session, "resize", session_id=sid, cols=90, rows=20)
        snap = (await ok(session, "snapshot", session_id=sid)).structured_content
        assert (snap["cols"], snap["rows"]) == (90, 20)
        exported = (await ok(session, "record_export", session_id=sid)).structured_content
        assert exported["path"].endswith(".cast")
        video = (await ok(session, "record_export", session_id=sid, format="gif", speed=4, max_idle=0.5, fps=5)).structured_content
        assert video["path"].endswith(".gif") and video["frames"] >= 1 and (video["speed"], video["fps"]) == (4, 5)
        await ok(session, "signal", session_id=sid, name="KILL")
        await ok(session, "wait", session_id=sid, exit=True, timeout=10)
        assert (await ok(session, "gc", dry_run=True)).structured_content is not None
        doctor = (await ok(session, "doctor")).structured_content
        assert doctor["home"]["path"] == str(cli.home)
        await ok(session, "destroy", session_id=sid)

    drive(cli, steps)


def test_an_argument_no_parameter_has_is_refused_by_name(cli: Cli) -> None:
    async def steps(session: Any) -> None:
        refused = error_of(await session.call_tool("list", {"all": True, "timout": 600}))
        assert refused["code"] == "USAGE" and "'timout'" in refused["message"], refused
        sid = (await ok(session, "create", argv=bash_argv())).structured_content["sessionId"]
        typo = error_of(await session.call_tool("wait", {"session_id": sid, "text": "x", "timout": 1}))
        assert typo["code"] == "USAGE" and "'timout'" in typo["message"] and "timeout" in typo["message"]
        bad_env = error_of(await session.call_tool("create", {"argv": bash_argv(), "env": {"A=B": "x"}}))
        assert bad_env["code"] == "INVALID_INPUT" and "env" in bad_env["message"]
        await ok(session, "destroy", session_id=sid)

    drive(cli, steps)


def test_waits_that_never_end_leave_the_other_tools_answered(cli: Cli) -> None:
    """More waits without a time-out than anyio has default worker threads (40), some of them
    cancelled by the client: `list` and `destroy` are still answered at once."""

    async def steps(session: Any) -> None:
        sid = (await ok(session, "create", argv=bash_argv())).structured_content["sessionId"]
        ended: list[Any] = []

        async def forever() -> None:
            ended.append(await session.call_tool("wait", {"session_id": sid, "text": "never-printed", "timeout": 0}))

        async with anyio.create_task_group() as group:
            for _ in range(44):
                group.start_soon(forever)
            async with anyio.create_task_group() as cancelled:
                for _ in range(4):
                    cancelled.start_soon(forever)
                await anyio.sleep(1.5)  # every wait is in flight, holding a worker thread
                cancelled.cancel_scope.cancel()
            with anyio.fail_after(20):
                assert (await ok(session, "list")).structured_content["sessions"][0]["sessionId"] == sid
                await ok(session, "destroy", session_id=sid)
        assert len(ended) == 44 and all(error_of(result)["code"] == "SESSION_NOT_RUNNING" for result in ended), ended[:1]

    drive(cli, steps)


FILL_SCREEN = """
import sys, time
cols, rows = int(sys.argv[1]), int(sys.argv[2])
row = lambda y: "".join(f"\\x1b[3{(x + y) % 8};4{7 - (x + y) % 8}m{chr(65 + (x + y) % 26)}" for x in range(cols))
sys.stdout.write("\\x1b[H\\x1b[2J" + "\\r\\n".join(row(y) for y in range(rows - 1)) + "\\r\\n\\x1b[0mFIL" + "LED")
sys.stdout.flush()
time.sleep(600)
"""
"""Fills a cols x rows screen with a colour per cell, then FILLED on the last row."""


def test_a_structured_snapshot_past_the_cell_bound_is_refused_while_list_is_answered(cli: Cli) -> None:
    """One structured snapshot of 1000x250 (32 MB of cells) held the event loop for seconds
    (~30 s on a loaded machine): the SDK validates and serializes the result there, so every
    other call waited. One call returns at most 20,000 cells (ADR 0025); past that the call is
    refused before the host reads a cell, live or replayed."""
    import sys

    async def steps(session: Any) -> None:
        argv = [sys.executable, "-c", FILL_SCREEN, "1000", "250"]
        sid = (await ok(session, "create", argv=argv, cols=1000, rows=250)).structured_content["sessionId"]
        assert (await ok(session, "wait", session_id=sid, text="FILLED", timeout=30)).structured_content["matched"]
        answered: dict[str, Any] = {}

        async def keep(name: str, tool: str, arguments: dict[str, Any]) -> None:
            answered[name] = await session.call_tool(tool, arguments)

        async with anyio.create_task_group() as group:
            group.start_soon(keep, "snapshot", "snapshot", {"session_id": sid, "structured": True})
            await anyio.sleep(0)  # the snapshot's request is sent first
            group.start_soon(keep, "list", "list", {})
        refused = error_of(answered["snapshot"])
        assert refused["code"] == "INVALID_INPUT" and refused["exitCode"] == 2, refused
        assert refused["details"] == {"limit": 20_000, "cells": 250_000, "cols": 1000, "rows": 250, "sessionId": sid}
        assert "20,000" in refused["message"] and "1000x250" in refused["message"]
        assert not answered["list"].is_error and answered["list"].structured_content["sessions"][0]["sessionId"] == sid

        # The text of the same screen is not bounded; at the bound the cells come whole.
        text = (await ok(session, "snapshot", session_id=sid)).structured_content
        assert len(text["lines"]) == 250 and text["lines"][-1] == "FILLED"
        await ok(session, "resize", session_id=sid, cols=200, rows=100)
        cells = (await ok(session, "snapshot", session_id=sid, structured=True)).structured_content["cells"]
        assert len(cells) == 100 and {len(row) for row in cells} == {200}
        await ok(session, "resize", session_id=sid, cols=201, rows=100)
        assert error_of(await session.call_tool("snapshot", {"session_id": sid, "structured": True}))["details"]["cells"] == 20_100

        # An ended session's screen is replayed in the worker: the same bound, before any cell.
        await ok(session, "destroy", session_id=sid)
        replayed = error_of(await session.call_tool("snapshot", {"session_id": sid, "structured": True}))
        assert replayed["code"] == "INVALID_INPUT" and replayed["details"]["limit"] == 20_000, replayed
        assert (await ok(session, "snapshot", session_id=sid)).structured_content["source"] == "replay"

    drive(cli, steps)


class RawServer:
    """`agent-tty mcp` driven line by line, for what the SDK's client cannot send or do: a lone
    surrogate escape, closing stdin with a call in flight."""

    def __init__(self, cli: Cli, env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> None:
        import subprocess

        self.process = subprocess.Popen(
            [*cli.command, "mcp", "--home", str(cli.home), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=cli.env(env),
        )
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
        assert self.reply()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def reply(self, timeout: float = 20) -> dict[str, Any]:
        import select

        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        assert ready, "no reply"
        return json.loads(self.process.stdout.readline())

    def call(self, request_id: int, tool: str, arguments: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})


def test_a_lone_surrogate_is_answered_with_an_error_naming_it(cli: Cli) -> None:
    server = RawServer(cli)
    try:
        server.send(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"inspect","arguments":{"session_id":"\\ud800"}}}\n')
        refused = server.reply()
        assert refused["id"] == 7 and "session_id" in refused["error"]["message"], refused
        server.call(8, "list", {})
        assert server.reply()["result"]["structuredContent"]["sessions"] == []  # and it serves on
    finally:
        server.process.kill()  # ours
        server.process.wait()


def test_the_server_ends_with_its_clients_stdin_even_while_a_wait_has_no_time_out(cli: Cli) -> None:
    server = RawServer(cli)
    server.call(1, "create", {"argv": bash_argv()})
    sid = server.reply()["result"]["structuredContent"]["sessionId"]
    server.call(2, "wait", {"session_id": sid, "text": "never-printed", "timeout": 0})
    time.sleep(1)  # the wait is in flight
    assert server.process.stdin is not None
    server.process.stdin.close()
    try:
        assert server.process.wait(timeout=20) == 0
    finally:
        if server.process.poll() is None:
            server.process.kill()  # ours
    # The session it made lives on (sessions outlive their client), still served.
    assert cli.run("inspect", sid).result["status"] == "running"
    cli.run("destroy", sid)


def test_wait_durations_say_their_unit_and_errors_name_the_tools_parameters(cli: Cli) -> None:
    """One unit rule on every surface (ADR 0028): a duration whose name ends in _ms is
    milliseconds, as the CLI's --screen-stable-ms; `stable: 300` was 300 s here and 300 ms on
    the CLI. The shared operation's errors name the tool's parameters, not the CLI's flags."""

    async def steps(session: Any) -> None:
        wait = next(tool for tool in (await session.list_tools()).tools if tool.name == "wait").input_schema["properties"]
        assert "milliseconds" in wait["screen_stable_ms"]["description"] and "milliseconds" in wait["idle_ms"]["description"]
        assert "stable" not in wait and "idle" not in wait and "seconds" in wait["timeout"]["description"].lower()
        sid = (await ok(session, "create", argv=bash_argv(), env={"PS1": "$ "})).structured_content["sessionId"]
        for condition in ("screen_stable_ms", "idle_ms"):
            start = time.monotonic()
            waited = (await ok(session, "wait", session_id=sid, timeout=20, **{condition: 300})).structured_content
            assert waited["matched"] is True and time.monotonic() - start < 10, (condition, waited)
        # output: what the program printed since its last input, in the tool's output schema.
        printed = (await ok(session, "wait", session_id=sid, timeout=20, idle_ms=300, output=True)).structured_content
        assert isinstance(printed["output"], str) and printed["outputTruncated"] is False, printed

        old = error_of(await session.call_tool("wait", {"session_id": sid, "stable": 300}))
        assert old["code"] == "USAGE" and "'screen_stable_ms'" in old["message"] and "milliseconds" in old["message"], old

        refused = [
            ({"text": "a", "exit": True}, ["text, regex, screen_stable_ms, idle_ms, exit"]),
            ({"regex": "("}, ["invalid regex '('"]),
            ({"text": "a", "after_seq": -1}, ["invalid after_seq -1"]),
        ]
        for arguments, words in refused:
            error = error_of(await session.call_tool("wait", {"session_id": sid, "timeout": 5, **arguments}))
            assert error["code"] == "INVALID_INPUT" and "--" not in error["message"], (arguments, error)
            assert all(word in error["message"] for word in words), (arguments, error)
        no_folder = error_of(await session.call_tool("create", {"argv": bash_argv(), "cwd": "/no/such/folder"}))
        assert no_folder["code"] == "INVALID_INPUT" and no_folder["message"].startswith("cwd '/no/such/folder'"), no_folder
        bad_name = error_of(await session.call_tool("create", {"argv": bash_argv(), "name": sid}))
        assert bad_name["code"] == "INVALID_INPUT" and bad_name["message"].startswith("invalid name "), bad_name
        await ok(session, "destroy", session_id=sid)

    drive(cli, steps)


def _children(pid: int) -> list[tuple[int, str]]:
    import os

    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as handle:
                parent = int(handle.read().rpartition(")")[2].split()[1])
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid:
            found.append((int(name), command))
    return found


def test_sessions_made_over_mcp_end_idle_after_the_server_was_killed_and_so_does_its_spare(cli: Cli) -> None:
    """A crashed client's sessions no longer live for ever (ADR 0029): a session created over
    MCP has an idle timeout by default (an hour; create's idle_timeout or the server's
    AGENT_TTY_MCP_IDLE_TIMEOUT say otherwise). The server killed with SIGKILL cannot clean up:
    its session ends once idle, and its spare host (ADR 0020) ends at once, by end of input."""
    import os
    import signal

    from tests.conftest import pid_alive, wait_until

    server = RawServer(cli)
    try:
        server.call(1, "create", {"argv": bash_argv()})
        by_default = server.reply()["result"]["structuredContent"]["sessionId"]
        server.call(2, "create", {"argv": bash_argv(), "idle_timeout": 0})
        never = server.reply()["result"]["structuredContent"]["sessionId"]
    finally:
        server.process.kill()  # ours
        server.process.wait()
    assert cli.manifest(by_default)["idleTimeoutMs"] == 3_600_000
    assert cli.manifest(never)["idleTimeoutMs"] is None
    for sid in (by_default, never):
        cli.run("destroy", sid)

    server = RawServer(cli, env={"AGENT_TTY_MCP_IDLE_TIMEOUT": "2s"})
    try:
        server.call(1, "create", {"argv": bash_argv(), "env": {"PS1": "$ "}})
        created = server.reply()["result"]["structuredContent"]
        spares = wait_until(lambda: [pid for pid, command in _children(server.process.pid) if "--standby" in command], what="a spare host")
    finally:
        os.kill(server.process.pid, signal.SIGKILL)  # ours, by its pid: a crash, nothing cleaned up
        server.process.wait()
    sid = created["sessionId"]
    assert cli.manifest(sid)["idleTimeoutMs"] == 2000
    # A spare still warming up reads its end of input once warm: seconds on a loaded machine.
    wait_until(lambda: not any(pid_alive(pid) for pid in spares), timeout=10, what="the spare host to end with the server")
    # Its 2 s, the hang-up's 2 s, and a loaded machine's slack: a minute at most, not an hour.
    wait_until(lambda: cli.run("inspect", sid).result["status"] == "exited", timeout=60, interval=0.2, what="the idle session to end")
    # The host records the end, then exits: a moment apart.
    wait_until(lambda: not pid_alive(created["hostPid"]) and not pid_alive(created["childPid"]), timeout=5, what="the host and bash to end")


def test_the_servers_idle_timeout_flag_outranks_its_environment(cli: Cli) -> None:
    """`agent-tty mcp --idle-timeout`: the default of the sessions this server creates, over
    AGENT_TTY_MCP_IDLE_TIMEOUT; a bad value is refused before anything is served."""
    import subprocess

    for args, expected in ((("--idle-timeout", "90s"), 90_000), (("--idle-timeout", "0"), None)):
        server = RawServer(cli, env={"AGENT_TTY_MCP_IDLE_TIMEOUT": "2s"}, args=args)
        try:
            server.call(1, "create", {"argv": bash_argv()})
            sid = server.reply()["result"]["structuredContent"]["sessionId"]
        finally:
            server.process.stdin.close()  # type: ignore[union-attr]
            server.process.wait(timeout=30)
        assert cli.manifest(sid)["idleTimeoutMs"] == expected, args
        cli.run("destroy", sid)
    done = subprocess.run([*cli.command, "--json", "mcp", "--home", str(cli.home), "--idle-timeout", "soon"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, env=cli.env(), timeout=60)
    assert done.returncode == 2, done.stdout
    error = json.loads(done.stdout)["error"]
    assert "--idle-timeout" in error["message"], error


def test_snapshot_styles_are_runs_a_model_can_read(tty: Cli) -> None:
    """Issue 29.7: a structured snapshot is nine keys a cell (about 290 KB for 80x24); `styles`
    gives the same colours and attributes as runs, only where they differ from the default."""

    async def steps(session: Any) -> None:
        program = ["sh", "-c", "printf 'plain \\033[31mred\\033[0m and \\033[1;44mbold on blue\\033[0m\\n'; exec sleep 60"]
        sid = (await ok(session, "create", argv=program)).structured_content["sessionId"]
        await ok(session, "wait", session_id=sid, text="bold on blue")
        styled = (await ok(session, "snapshot", session_id=sid, styles=True)).structured_content
        assert "cells" not in styled
        assert styled["lines"][0] == "plain red and bold on blue"
        assert styled["styles"] == [
            {"row": 0, "col": 6, "len": 3, "text": "red", "fg": 1},
            {"row": 0, "col": 14, "len": 12, "text": "bold on blue", "bg": 4, "bold": True},
        ], styled["styles"]
        cells = (await ok(session, "snapshot", session_id=sid, structured=True)).structured_content
        assert "styles" not in cells
        both = (await ok(session, "snapshot", session_id=sid, structured=True, styles=True)).structured_content
        assert both["styles"] == styled["styles"] and both["cells"] == cells["cells"]
        # The size a model reads: the runs against the cells of the same screen.
        assert len(json.dumps(styled)) * 20 < len(json.dumps(cells)), (len(json.dumps(styled)), len(json.dumps(cells)))
        await ok(session, "destroy", session_id=sid)

    drive(tty, steps)
