"""agent-tty paste ID TEXT: text as one paste (bracketed when the program enabled it)."""

from __future__ import annotations

from typing import Optional

import typer

from agent_tty.cli.output import emit


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    text: Optional[str] = typer.Argument(None, metavar="TEXT"),
    file: Optional[str] = typer.Option(None, "--file", help="Paste this file's contents instead of TEXT."),
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import drive

    result = drive.paste(cli_engine(), session_id, text, file)
    emit(result, f"seq {result['seq']}")
    return 0
