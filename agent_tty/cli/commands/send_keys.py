"""agent-tty send-keys ID KEY...: named keys (Enter, Up, Ctrl+C, F5, ...)."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    keys: Annotated[list[str], typer.Argument(metavar="KEY...", help="Enter, Tab, Escape, Up, Ctrl+C, Alt+x, F1-F12, a single character ...")],
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import drive

    result = drive.send_keys(cli_engine(), session_id, keys)
    emit(result, f"seq {result['seq']}")
    return 0
