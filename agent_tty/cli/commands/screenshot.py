"""agent-tty screenshot ID [--out PATH]: a PNG of the screen, saved under the session's artifacts."""

from __future__ import annotations

from typing import Optional

import typer

from agent_tty.cli.output import emit


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    out: Optional[str] = typer.Option(None, "--out", help="Also copy the PNG to this path."),
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops.artifacts import screenshot

    result = screenshot(cli_engine(), session_id, out)
    emit(result, str(result["copiedTo"] or result["path"]))
    return 0
