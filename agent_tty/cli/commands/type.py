"""agent-tty type ID TEXT: literal text to the program, as if typed."""

from __future__ import annotations

import typer

from agent_tty.cli.output import emit


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    text: str = typer.Argument(..., metavar="TEXT", help="Sent as it is: no key names, no newline added."),
) -> int:
    from agent_tty.cli.commands.live import call_live

    result = call_live(session_id, {"op": "input", "kind": "type", "data": text})
    emit({"sessionId": session_id, **result}, f"seq {result['seq']}")
    return 0
