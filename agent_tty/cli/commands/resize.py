"""agent-tty resize ID --cols C --rows R."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    cols: Annotated[int, typer.Option("--cols")],
    rows: Annotated[int, typer.Option("--rows")],
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import drive

    result = drive.resize(cli_engine(), session_id, cols, rows)
    emit(result, f"{session_id} resized to {cols}x{rows}")
    return 0
