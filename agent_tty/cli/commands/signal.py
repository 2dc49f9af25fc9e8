"""agent-tty signal ID SIGNAL: a signal to the program's process group."""

from __future__ import annotations

import typer

from agent_tty.cli.output import emit


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    signal_name: str = typer.Argument(..., metavar="SIGNAL", help="INT, TERM, HUP, ... or a number."),
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import drive

    result = drive.signal(cli_engine(), session_id, signal_name)
    where = "the foreground group" if result.get("foreground") else "the program's group"
    emit(result, f"{result['signal']} sent to {where} {result.get('group')} of {session_id}")
    return 0
