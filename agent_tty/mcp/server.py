"""The MCP server: one tool per operation of the Python API, over stdio.

Each tool calls agent_tty.api as its CLI command does and returns the command's `--json` result
as structured content. The server holds a Home's path and nothing else: every call checks the
Home and reads the session's records again (no manifest, verdict or session is cached).
"""

import base64
import hashlib
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver import exceptions as sdk_errors
from mcp_types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from agent_tty.api import Client
from agent_tty.mcp.calls import call, error_result
from agent_tty.mcp.results import output_type, published_input_schema, published_output_schema
from agent_tty.protocol.errors import AgentTtyError, ErrorCode

INSTRUCTIONS = """Real, long-lived terminals. `create` starts a program (e.g. ["bash"]) and returns
its sessionId (tools also take the name given to create); `run` types a shell command and waits
until it completed; `type`/`paste`/`send_keys` drive it; `wait` waits for text, a regex, a still
screen, silence or the exit; `snapshot` reads the screen as text, `screenshot` as a PNG. `destroy` ends a session; `gc` removes ended ones'
folders. Durations: a parameter whose name ends in _ms is milliseconds (screen_stable_ms, idle_ms),
every other is seconds (timeout, idle_timeout, older_than; 0: no limit). {idle}
In results, times (createdAt, endedAt, updatedAt) are Unix time in seconds, and a seq is an event
of the session's log (wait's after_seq). Errors carry the CLI's codes (SESSION_NOT_FOUND, ...)."""

SessionId = Annotated[str, Field(description="The session's id, its create name, or a unique prefix of its id.")]
Seconds = Annotated[float, Field(ge=0, description="Seconds; 0 for no limit.")]

IDLE_TIMEOUT_S = 3600.0
"""The idle timeout of a session created over MCP when create gives none: an hour without input
or output (docs/adr/0029). A client that crashed leaves its shells behind; they end within this.
The server's environment changes it: AGENT_TTY_MCP_IDLE_TIMEOUT (a duration, 0 for never)."""
IDLE_TIMEOUT_ENV = "AGENT_TTY_MCP_IDLE_TIMEOUT"

RENAMED = {("wait", "stable"): ("screen_stable_ms", "milliseconds"), ("wait", "idle"): ("idle_ms", "milliseconds")}
"""Parameters of earlier versions that were seconds, now named with their unit (docs/adr/0028):
a call that still uses one is told the new name, never read in another unit."""


def idle_timeout_default() -> float:
    """The server's default idle timeout in seconds (0: never), from its environment."""
    import os

    from agent_tty.protocol.values import parse_duration

    value = os.environ.get(IDLE_TIMEOUT_ENV)
    return IDLE_TIMEOUT_S if value is None or not value.strip() else parse_duration(value, IDLE_TIMEOUT_ENV)


def _idle_sentence(seconds: float) -> str:
    if seconds == 0:
        return "Sessions created here have no idle timeout unless create's idle_timeout gives one."
    return (
        f"A session created here ends after {seconds:g} s without input or output (create's idle_timeout: "
        "another time, 0 for never), so a crashed client leaves none for ever."
    )


STRUCTURED_CELLS_PER_CALL = 20_000
"""The most cells (cols x rows) one structured `snapshot` returns (250x80, 200x100): the SDK
validates and serializes a result on the event loop that answers every call, in single calls
that hold the GIL, ~6 us a cell; 1000x250 held it for seconds (docs/adr/0025)."""

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
DRIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
END = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def _out(tool: str) -> Any:
    """The return annotation: a CallToolResult whose structured content has the tool's output
    model (agent_tty/mcp/results.py), published as its outputSchema."""
    return Annotated[CallToolResult, output_type(tool)]


class AgentTtyServer(MCPServer):
    """MCPServer whose own refusals (unknown tool, arguments against the input schema) are tool
    errors with the contract's USAGE code, like the CLI's parse errors."""

    _parameters: dict[str, frozenset[str]] | None = None

    async def list_tools(self) -> list[Any]:
        """The tools as published: their schemas compact (mcp/results.py, docs/adr/0034). The
        tools themselves keep pydantic's full schemas; results are validated against the models."""
        return [
            tool.model_copy(
                update={
                    "input_schema": published_input_schema(tool.input_schema),
                    "output_schema": published_output_schema(tool.output_schema),
                }
            )
            for tool in await super().list_tools()
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        problem = await self._argument_problem(name, arguments)
        if problem is not None:
            return error_result(AgentTtyError(ErrorCode.USAGE, f"invalid arguments for tool {name!r}: {problem}", tool=name))
        try:
            return await super().call_tool(name, arguments, context)
        except sdk_errors.ToolError as err:
            # The SDK's crash wrapper (UnexpectedToolError, not in mcp 2.0.0) is a bug, not a usage error.
            if type(err).__name__ == "UnexpectedToolError":
                raise
            cause = err.__cause__
            if isinstance(cause, ValidationError):
                problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}" for e in cause.errors())
                message = f"invalid arguments for tool {name!r}: {problems}"
            else:
                message = str(err)
            return error_result(AgentTtyError(ErrorCode.USAGE, message, tool=name))


    async def _argument_problem(self, name: str, arguments: dict[str, Any]) -> str | None:
        """What the SDK would let through but a caller must hear about: an argument no parameter
        has (`timout` for `timeout` would otherwise be dropped and the default used). Text that is
        not Unicode never gets here: mcp/stdio.py answers such a request itself."""
        if self._parameters is None:
            self._parameters = {
                tool.name: frozenset((tool.input_schema or {}).get("properties", {})) for tool in await self.list_tools()
            }
        known = self._parameters.get(name)
        if known is not None:
            unknown = sorted(key for key in arguments if key not in known)
            renamed = [(key, RENAMED[name, key]) for key in unknown if (name, key) in RENAMED]
            if renamed:
                return "; ".join(f"no parameter {old!r}: it is {new!r} now, in {unit} ({old} was seconds)" for old, (new, unit) in renamed)
            if unknown:
                return f"no parameter {', '.join(map(repr, unknown))} (it takes {', '.join(sorted(known)) or 'none'})"
        return None


def build(home: str | None, client: Client | None = None, idle_timeout: float | None = None) -> MCPServer:
    """The server; `idle_timeout`: the seconds of idleness after which a session created without
    create's `idle_timeout` ends (None: IDLE_TIMEOUT_S, or the environment's; 0: never)."""
    from agent_tty import __version__

    client = client if client is not None else Client(home)
    default_idle = idle_timeout_default() if idle_timeout is None else idle_timeout
    instructions = INSTRUCTIONS.format(idle=_idle_sentence(default_idle))
    # WARNING: the SDK logs every request at INFO on stderr, a cost on each round trip.
    server = AgentTtyServer(name="agent-tty", version=__version__, instructions=instructions, log_level="WARNING")

    def tool(**options: Any) -> Any:
        """server.tool, with the docstring as one paragraph: a description is read by a model as
        it is sent, and a docstring's continuation lines carry the code's indentation."""
        register = server.tool(**options)

        def decorate(function: Any) -> Any:
            function.__doc__ = " ".join((function.__doc__ or "").split())
            return register(function)

        return decorate

    # ------------------------------------------------------------------ sessions

    @tool(name="create", annotations=DRIVE)
    async def create(
        ctx: Context,
        argv: Annotated[list[str], Field(min_length=1, description='The program and its arguments, e.g. ["bash"].')],
        name: Annotated[str | None, Field(description="A unique name to use instead of the id.")] = None,
        cols: Annotated[int, Field(description="Terminal width in columns.")] = 80,
        rows: Annotated[int, Field(description="Terminal height in rows.")] = 24,
        cwd: Annotated[str | None, Field(description="Working directory (default: the server's).")] = None,
        env: Annotated[dict[str, str] | None, Field(description="Extra environment variables.")] = None,
        term: Annotated[str, Field(description="$TERM of the program.")] = "xterm-256color",
        idle_timeout: Annotated[
            float | None,
            Field(
                ge=0,
                description=f"Seconds without input or output after which the session ends (its program is hung up); "
                f"omitted: {default_idle:g}, this server's default; 0: never.",
            ),
        ] = None,
    ) -> _out("create"):
        """Start a program in a new session (a real terminal kept by a background host)."""
        idle = default_idle if idle_timeout is None else idle_timeout
        return await call(
            ctx,
            lambda: client.create(argv, name=name, cols=cols, rows=rows, cwd=cwd, env=env, term=term, idle_timeout=idle).created or {},
        )

    @tool(name="list", annotations=READ)
    async def list_(
        ctx: Context, all: Annotated[bool, Field(description="Also ended sessions.")] = False
    ) -> _out("list"):
        """List sessions (active ones; all=true for every one)."""
        return await call(ctx, lambda: client.list(all))

    @tool(name="inspect", annotations=READ)
    async def inspect(ctx: Context, session_id: SessionId) -> _out("inspect"):
        """A session's manifest and derived facts (status, pids, exit code, sizes)."""
        return await call(ctx, lambda: client.find(session_id).inspect())

    @tool(name="destroy", annotations=END)
    async def destroy(
        ctx: Context,
        session_id: SessionId,
        force: Annotated[bool, Field(description="End what can be proven the session's without its host (host wedged or gone).")] = False,
    ) -> _out("destroy"):
        """End a session: its program and every process it started."""
        return await call(ctx, lambda: client.find(session_id).destroy(force))

    @tool(name="gc", annotations=END)
    async def gc(
        ctx: Context,
        dry_run: Annotated[bool, Field(description="Only say what would be removed.")] = False,
        older_than: Annotated[float | None, Field(ge=0, description="Only sessions that ended at least this many seconds ago.")] = None,
        stale_only: Annotated[bool, Field(description="Only sessions whose host died without recording the end.")] = False,
    ) -> _out("gc"):
        """Remove the folders of ended sessions."""
        return await call(ctx, lambda: client.gc(dry_run=dry_run, older_than=older_than, stale_only=stale_only))

    @tool(name="doctor", annotations=READ)
    async def doctor(ctx: Context) -> _out("doctor"):
        """Check this machine: Python, PTYs, platform plugins, the Home, screen backend, fonts."""
        return await call(ctx, client.doctor)

    # ------------------------------------------------------------------ driving

    @tool(name="run", annotations=DRIVE)
    async def run(
        ctx: Context,
        session_id: SessionId,
        command: Annotated[str, Field(description="A shell command line, typed and followed by Enter.")],
        timeout: Annotated[float, Field(ge=0, description="Seconds to wait for it to complete; 0 for no limit.")] = 30.0,
        wait: Annotated[bool, Field(description="Wait until the command completed (false: return once typed).")] = True,
    ) -> _out("run"):
        """Type a shell command and wait until it completed. The result says completed, exitStatus
        (its $?, null unless completed), output (what it printed, its echo left out: the last 64
        KiB, outputTruncated if more), timedOut (timeout passed first: a result, not an error),
        ended (the program ended first), typed (false: the shell did not read the line within
        timeout, nothing typed). Reports progress every second while it waits."""
        return await call(ctx, lambda: client.find(session_id).run(command, timeout=timeout, wait=wait), total_s=timeout, what="run")

    @tool(name="type", annotations=DRIVE)
    async def type_(ctx: Context, session_id: SessionId, text: Annotated[str, Field(description="Literal text to type (no Enter added).")]) -> _out("type"):
        """Type literal text."""
        return await call(ctx, lambda: client.find(session_id).type(text))

    @tool(name="paste", annotations=DRIVE)
    async def paste(ctx: Context, session_id: SessionId, text: Annotated[str, Field(description="Text to paste.")]) -> _out("paste"):
        """Paste text (bracketed when the program enabled bracketed paste)."""
        return await call(ctx, lambda: client.find(session_id).paste(text))

    @tool(name="send_keys", annotations=DRIVE)
    async def send_keys(
        ctx: Context,
        session_id: SessionId,
        keys: Annotated[list[str], Field(min_length=1, description='Named keys in order: "Enter", "Up", "C-c", "Ctrl+Left", "F5", or single characters.')],
    ) -> _out("send_keys"):
        """Send named keys: Enter, Escape, arrows, Ctrl/Alt/Shift combinations, function keys."""
        return await call(ctx, lambda: client.find(session_id).send_keys(*keys))

    @tool(name="mark", annotations=DRIVE)
    async def mark(ctx: Context, session_id: SessionId, label: Annotated[str, Field(description="The marker's label.")]) -> _out("mark"):
        """Put a labelled marker in the session's event log (its seq works as wait's after_seq)."""
        return await call(ctx, lambda: client.find(session_id).mark(label))

    @tool(name="resize", annotations=DRIVE)
    async def resize(
        ctx: Context,
        session_id: SessionId,
        cols: Annotated[int, Field(description="Columns.")],
        rows: Annotated[int, Field(description="Rows.")],
    ) -> _out("resize"):
        """Resize the session's terminal."""
        return await call(ctx, lambda: client.find(session_id).resize(cols, rows))

    @tool(name="signal", annotations=DRIVE)
    async def signal(
        ctx: Context,
        session_id: SessionId,
        name: Annotated[str, Field(description="INT, QUIT, TSTP (to the foreground job, like ^C), TERM, KILL, HUP, ...")],
    ) -> _out("signal"):
        """Send a signal to the session's program."""
        return await call(ctx, lambda: client.find(session_id).signal(name))

    # ------------------------------------------------------------------ observing

    @tool(name="wait", annotations=READ)
    async def wait(
        ctx: Context,
        session_id: SessionId,
        text: Annotated[str | None, Field(description="Wait until this text is on the screen.")] = None,
        regex: Annotated[str | None, Field(description="Wait until this Python regex matches the screen.")] = None,
        screen_stable_ms: Annotated[
            float | None, Field(gt=0, description="Wait until the screen has not changed for this many milliseconds.")
        ] = None,
        idle_ms: Annotated[float | None, Field(gt=0, description="Wait until the program printed nothing for this many milliseconds.")] = None,
        exit: Annotated[bool, Field(description="Wait until the program exited.")] = False,
        after_seq: Annotated[int | Literal["last"] | None, Field(description='Only matches that appeared after this event seq, or "last" (the last input).')] = None,
        timeout: Annotated[float, Field(ge=0, description="Seconds; 0 for no limit. On expiry the result says timedOut (not an error).")] = 30.0,
        output: Annotated[bool, Field(description="Return what the program printed after after_seq's input (its echo left out) as output, the last 64 KiB (outputTruncated if more); text/regex then search that instead of the screen.")] = False,
    ) -> _out("wait"):
        """Wait for exactly one condition: text, regex, screen_stable_ms, idle_ms or exit. The
        result says matched or timedOut, and seq (the last event when it ended). Reports
        progress every second while it waits; SESSION_NOT_RUNNING when the session ended first."""
        return await call(
            ctx,
            lambda: client.find(session_id).wait(
                text,
                regex=regex,
                screen_stable_ms=screen_stable_ms,
                idle_ms=idle_ms,
                exit=exit,
                after_seq=after_seq,
                timeout=timeout,
                output=output,
            ),
            total_s=timeout,
            what="wait",
        )

    @tool(name="batch", annotations=DRIVE)
    async def batch(
        ctx: Context,
        session_id: SessionId,
        steps: Annotated[
            list[dict[str, Any]],
            Field(
                min_length=1,
                description='In order, each {"kind": ..., and the parameters of the tool of that name}: run (command, timeout, wait), '
                "type (text), paste (text), sendKeys (keys), wait (text, regex, screen_stable_ms, idle_ms, exit, after_seq, timeout, output).",
            ),
        ],
        keep_going: Annotated[bool, Field(description="Run the later steps after one failed.")] = False,
    ) -> _out("batch"):
        """Run input and wait steps in order, all checked before the first runs; each wait counts only
        what appeared after the input step before it. Stops at the first failed step unless keep_going.
        The result says status (completed, failed), exitCode (the first failed step's, as the CLI's) and a
        record per step (status completed/failed/not-run, durationMs, seq, matched, timedOut, error, result)."""
        return await call(ctx, lambda: client.find(session_id).batch(steps, keep_going), total_s=0.0, what="batch")

    @tool(name="snapshot", annotations=READ)
    async def snapshot(
        ctx: Context,
        session_id: SessionId,
        structured: Annotated[
            bool,
            Field(
                description="Also every cell with its colours and attributes: nine keys a cell, about 290 KB for 80x24; "
                f"a screen of at most {STRUCTURED_CELLS_PER_CALL:,} cells (cols x rows), else INVALID_INPUT. "
                "Prefer styles."
            ),
        ] = False,
        scrollback: Annotated[bool, Field(description="Also the lines that scrolled off the top.")] = False,
        styles: Annotated[
            bool,
            Field(
                description="Also the colours and attributes as runs: {row, col, len, text} and what differs from the default "
                "style, for the runs not in it (a few hundred bytes for a coloured prompt); the same screen bound as structured."
            ),
        ] = False,
    ) -> _out("snapshot"):
        """The screen: its lines as text content, and the snapshot (cursor, seq, hash) as structured content."""

        def screen_text(result: dict[str, Any]) -> list[TextContent]:
            lines = [*result.get("scrollback", []), *result.get("lines", [])]
            return [TextContent(type="text", text="\n".join(lines).rstrip("\n"))]

        def take() -> dict[str, Any]:
            result = client.find(session_id).snapshot(structured or styles, scrollback, max_cells=STRUCTURED_CELLS_PER_CALL)
            if styles:
                from agent_tty.mcp.styles import style_runs

                result = {**result, "styles": style_runs(result["cells"])}
                if not structured:
                    del result["cells"]
            return result

        return await call(ctx, take, content=screen_text)

    @tool(name="screenshot", annotations=READ)
    async def screenshot(
        ctx: Context,
        session_id: SessionId,
        out: Annotated[str | None, Field(description="Also copy the PNG to this path (on the server's machine).")] = None,
    ) -> _out("screenshot"):
        """A PNG of the screen: an image content block, and the saved file's path as structured content."""
        png: dict[str, bytes] = {}

        def work() -> dict[str, Any]:
            result = client.find(session_id).screenshot(out)
            png["data"] = _saved_png(result)
            return result

        def image(result: dict[str, Any]) -> list[Any]:
            return [
                ImageContent(type="image", data=base64.b64encode(png["data"]).decode("ascii"), mime_type="image/png"),
                TextContent(type="text", text=f"saved {result['path']} ({result['width']}x{result['height']} px)"),
            ]

        return await call(ctx, work, content=image)

    @tool(name="record_export", annotations=READ)
    async def record_export(
        ctx: Context,
        session_id: SessionId,
        format: Annotated[
            Literal["asciicast", "webm", "mp4", "gif"],
            Field(description="asciicast: asciinema v2; webm, mp4, gif: a video whose frames are screenshots (webm/mp4 need agent-tty[video])."),
        ] = "asciicast",
        out: Annotated[str | None, Field(description="Also copy the file to this path (on the server's machine).")] = None,
        speed: Annotated[float | None, Field(description="Video: times as fast as the session (default 1).")] = None,
        max_idle: Annotated[float | None, Field(description="Video: longest pause kept, seconds (default 2; 0: all).")] = None,
        fps: Annotated[int | None, Field(description="Video: samples a second, 1-60 (default 10).")] = None,
    ) -> _out("record_export"):
        """The session's recording as a file (saved under the session's artifacts)."""
        return await call(
            ctx, lambda: client.find(session_id).export(format, out, speed=speed, max_idle=max_idle, fps=fps)
        )

    return server


def _saved_png(result: dict[str, Any]) -> bytes:
    """The PNG the screenshot just saved, read through the storage layer's checked read
    (O_NOFOLLOW, ours, regular) and held to the digest the operation reported."""
    from agent_tty.storage.files import read_bytes

    path = Path(result["path"])
    data = read_bytes(path)
    if hashlib.sha256(data).hexdigest() != result.get("sha256"):
        raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"{path} changed after it was saved", path=str(path))
    return data


def serve(home: str | None, idle_timeout: float | None = None) -> None:
    """Serve until the client closes stdin (mcp/stdio.py), then exit. `idle_timeout`: `agent-tty
    mcp --idle-timeout`, which outranks AGENT_TTY_MCP_IDLE_TIMEOUT (None: that, else the default)."""
    import os
    import sys

    import anyio

    from agent_tty.mcp.stdio import serve_stdio

    if idle_timeout is None:
        idle_timeout = idle_timeout_default()  # a bad AGENT_TTY_MCP_IDLE_TIMEOUT: exit 2 before anything starts
    client = Client(home)
    server = build(home, client, idle_timeout)
    try:
        anyio.run(serve_stdio, server._lowlevel_server)
    finally:
        client.close()  # the spare host, which has no session
    # A cancelled wait's thread still blocks in its API call (abandoned, not interrupted; it holds
    # only a socket to a host): the process ends without joining it.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
