"""agent-tty signal ID SIGNAL: a signal to the program's process group."""

from __future__ import annotations

import typer

from agent_tty.cli.output import emit


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    signal_name: str = typer.Argument(..., metavar="SIGNAL", help="INT, TERM, HUP, ... or a number."),
) -> int:
    from agent_tty.cli.commands.live import call_live
    from agent_tty.protocol.values import parse_signal

    number = parse_signal(signal_name)
    result = call_live(session_id, {"op": "signal", "signal": number})
    where = "the foreground group" if result.get("foreground") else "the program's group"
    emit({"sessionId": session_id, **result}, f"{result['signal']} sent to {where} {result.get('group')} of {session_id}")
    return 0
