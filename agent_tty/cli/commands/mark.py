"""agent-tty mark ID LABEL: a marker event in the log (a marker in an asciicast export)."""

from __future__ import annotations

import typer

from agent_tty.cli.output import emit


def command(session_id: str = typer.Argument(..., metavar="ID"), label: str = typer.Argument(..., metavar="LABEL")) -> int:
    from agent_tty.cli.commands.live import call_live

    result = call_live(session_id, {"op": "mark", "label": label})
    emit({"sessionId": session_id, **result}, f"seq {result['seq']}")
    return 0
