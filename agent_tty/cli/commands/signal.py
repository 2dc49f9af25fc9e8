"""agent-tty signal ID SIGNAL: a signal to the program's process group."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    signal_name: Annotated[str, typer.Argument(metavar="SIGNAL", help="INT, TERM, HUP, ... or a number.")],
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import drive

    result = drive.signal(cli_engine(), session_id, signal_name)
    where = "the foreground group" if result.get("foreground") else "the program's group"
    emit(result, f"{result['signal']} sent to {where} {result.get('group')} of {session_id}")
    return 0
