"""agent-tty resize ID --cols C --rows R."""

from __future__ import annotations

import typer

from agent_tty.cli.output import emit


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    cols: int = typer.Option(..., "--cols"),
    rows: int = typer.Option(..., "--rows"),
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import drive

    result = drive.resize(cli_engine(), session_id, cols, rows)
    emit(result, f"{session_id} resized to {cols}x{rows}")
    return 0
