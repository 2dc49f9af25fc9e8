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
    try:
        from agent_tty.mcp.server import serve
    except ModuleNotFoundError as err:
        if (err.name or "").partition(".")[0] not in SDK_MODULES:
            raise
        raise missing_sdk(err.name) from None

    serve(GLOBALS.home, seconds)
    return 0


SDK_MODULES = ("mcp", "mcp_types")
"""The MCP SDK's top-level modules: the `mcp` extra, not a default dependency (ADR 0035)."""

INSTALL = "pip install 'agent-tty[mcp]'"


def missing_sdk(module: str | None) -> Exception:
    """MISSING_DEPENDENCY (exit 2) for an install without the `mcp` extra: what to run, and into
    which interpreter, instead of ModuleNotFoundError as an INTERNAL_ERROR."""
    import sys

    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    return AgentTtyError(
        ErrorCode.MISSING_DEPENDENCY,
        f"this install has no MCP SDK (agent-tty's `mcp` extra): {INSTALL} "
        "(pipx: pipx install --force 'agent-tty[mcp]'; uv: uv tool install 'agent-tty[mcp]')",
        module=module,
        extra="mcp",
        install=INSTALL,
        python=sys.executable,
    )
