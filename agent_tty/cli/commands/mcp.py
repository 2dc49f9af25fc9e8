"""agent-tty mcp [--home PATH]: serve the sessions of a Home to an MCP client over stdio."""

from __future__ import annotations

from agent_tty.cli.output import GLOBALS


def command() -> int:
    """Run an MCP server on stdin/stdout until the client closes it. The Home is --home (a
    global option), else $AGENT_TTY_HOME, else ~/.agent-tty. Tools: docs/mcp.md."""
    # The SDK (and pydantic) load here only: no other command pays for them.
    from agent_tty.mcp.server import serve

    serve(GLOBALS.home)
    return 0
