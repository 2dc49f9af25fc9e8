"""agent-tty send-keys ID KEY...: named keys (Enter, Up, Ctrl+C, F5, ...)."""

from __future__ import annotations

import typer

from agent_tty.cli.output import emit


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    keys: list[str] = typer.Argument(..., metavar="KEY...", help="Enter, Tab, Escape, Up, Ctrl+C, Alt+x, F1-F12, a single character ..."),
) -> int:
    from agent_tty.cli.commands.live import call_live
    from agent_tty.terminal.keys import validate_keys

    validate_keys(keys)  # an unknown key is exit 2 before anything is sent
    result = call_live(session_id, {"op": "keys", "keys": keys})
    emit({"sessionId": session_id, **result}, f"seq {result['seq']}")
    return 0
