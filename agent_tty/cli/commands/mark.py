"""agent-tty mark ID LABEL: a marker event in the log (a marker in an asciicast export)."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(session_id: Annotated[str, typer.Argument(metavar="ID")], label: Annotated[str, typer.Argument(metavar="LABEL")]) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import drive

    result = drive.mark(cli_engine(), session_id, label)
    emit(result, f"seq {result['seq']}")
    return 0
