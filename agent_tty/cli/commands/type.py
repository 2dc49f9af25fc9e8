"""agent-tty type ID TEXT: literal text to the program, as if typed."""

from __future__ import annotations

import typer

from agent_tty.cli.output import emit


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    text: str = typer.Argument(..., metavar="TEXT", help="Sent as it is: no key names, no newline added."),
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import drive

    result = drive.type_text(cli_engine(), session_id, text)
    emit(result, f"seq {result['seq']}")
    return 0
