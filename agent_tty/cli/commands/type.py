"""agent-tty type ID TEXT: literal text to the program, as if typed."""

from __future__ import annotations

import typer

from agent_tty.cli.output import emit


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    text: str = typer.Argument(..., metavar="TEXT", help="Sent as it is: no key names, no newline added."),
) -> int:
    from agent_tty.cli.commands.live import send_input, text_chunks

    result = send_input(session_id, "type", text_chunks(text))
    emit({"sessionId": session_id, **result}, f"seq {result['seq']}")
    return 0
