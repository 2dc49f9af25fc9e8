"""agent-tty screenshot ID [--out PATH]: a PNG of the screen, saved under the session's artifacts."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    out: Annotated[str | None, typer.Option("--out", help="Also copy the PNG to this path.")] = None,
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops.artifacts import screenshot

    result = screenshot(cli_engine(), session_id, out)
    emit(result, str(result["copiedTo"] or result["path"]))
    return 0
