"""agent-tty record export ID --format asciicast [--out PATH]."""

from __future__ import annotations

from typing import Optional

import typer

from agent_tty.cli.output import emit


def command(
    action: str = typer.Argument(..., metavar="export", help="The only action: export."),
    session_id: str = typer.Argument(..., metavar="ID"),
    format_: str = typer.Option("asciicast", "--format", help="asciicast (asciinema v2)."),
    out: Optional[str] = typer.Option(None, "--out", help="Where to write it (default: the session's artifacts)."),
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops.artifacts import export
    from agent_tty.protocol.errors import invalid

    if action != "export":
        raise invalid(f"unknown record action {action!r}: use `record export`", value=action)
    if format_ != "asciicast":  # before the Home is looked at, as before
        raise invalid(f"invalid --format {format_!r}: use asciicast", value=format_)
    result = export(cli_engine(), session_id, format_, out)
    emit(result, result["path"])
    return 0
