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
    from agent_tty.cli.commands.live import file_chunks, send_input, text_chunks
    from agent_tty.protocol.errors import invalid

    if (text is None) == (file is None):
        raise invalid("give TEXT or --file, not both")
    chunks = file_chunks(file) if file is not None else text_chunks(text or "")
    result = send_input(session_id, "paste", chunks)
    emit({"sessionId": session_id, **result}, f"seq {result['seq']}")
    return 0
