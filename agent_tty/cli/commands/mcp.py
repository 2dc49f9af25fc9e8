"""agent-tty mcp [--home PATH] [--idle-timeout DUR]: serve the sessions of a Home to an MCP client over stdio."""

from __future__ import annotations

from agent_tty.cli.output import GLOBALS

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    idle_timeout: Annotated[
        str | None,
        typer.Option(
            "--idle-timeout",
            help="Sessions created here without create's idle_timeout end after this long without input or output "
            "(a bare number is seconds; 0: never; default $AGENT_TTY_MCP_IDLE_TIMEOUT, else 1h).",
        ),
    ] = None,
) -> int:
    """Run an MCP server on stdin/stdout until the client closes it. The Home is --home (a
    global option), else $AGENT_TTY_HOME, else ~/.agent-tty. Tools: docs/mcp.md."""
    from agent_tty.protocol.values import parse_duration

    # Checked before the SDK loads: a bad value is exit 2 with nothing served.
    seconds = parse_duration(idle_timeout, "--idle-timeout") if idle_timeout is not None else None
    # The SDK (and pydantic) load here only: no other command pays for them.
    from agent_tty.mcp.server import serve

    serve(GLOBALS.home, seconds)
    return 0
