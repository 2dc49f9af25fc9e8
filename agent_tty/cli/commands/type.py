"""agent-tty type ID TEXT: literal text to the program, as if typed."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    text: Annotated[str, typer.Argument(metavar="TEXT", help="Sent as it is: no key names, no newline added.")],
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import drive

    result = drive.type_text(cli_engine(), session_id, text)
    emit(result, f"seq {result['seq']}")
    return 0
