"""agent-tty paste ID TEXT: text as one paste (bracketed when the program enabled it)."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    text: Annotated[str | None, typer.Argument(metavar="TEXT")] = None,
    file: Annotated[str | None, typer.Option("--file", help="Paste this file's contents instead of TEXT.")] = None,
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import drive

    result = drive.paste(cli_engine(), session_id, text, file)
    emit(result, f"seq {result['seq']}")
    return 0
