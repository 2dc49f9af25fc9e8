"""agent-tty resize ID --cols C --rows R."""

from __future__ import annotations

import typer

from agent_tty.cli.output import emit


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    cols: int = typer.Option(..., "--cols"),
    rows: int = typer.Option(..., "--rows"),
) -> int:
    from agent_tty.cli.commands.live import call_live
    from agent_tty.protocol.values import check_size

    check_size(cols, rows)
    result = call_live(session_id, {"op": "resize", "cols": cols, "rows": rows})
    emit({"sessionId": session_id, **result}, f"{session_id} resized to {cols}x{rows}")
    return 0
