"""agent-tty mark ID LABEL: a marker event in the log (a marker in an asciicast export)."""

from __future__ import annotations

import typer

from agent_tty.cli.output import emit


def command(session_id: str = typer.Argument(..., metavar="ID"), label: str = typer.Argument(..., metavar="LABEL")) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import drive

    result = drive.mark(cli_engine(), session_id, label)
    emit(result, f"seq {result['seq']}")
    return 0
