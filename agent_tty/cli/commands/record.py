"""agent-tty record export ID --format asciicast [--out PATH]."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    action: Annotated[str, typer.Argument(metavar="export", help="The only action: export.")],
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    format_: Annotated[str, typer.Option("--format", help="asciicast (asciinema v2).")] = "asciicast",
    out: Annotated[str | None, typer.Option("--out", help="Where to write it (default: the session's artifacts).")] = None,
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
