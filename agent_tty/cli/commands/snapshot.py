"""agent-tty snapshot ID [--format text|structured] [--scrollback]."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    format_: Annotated[str, typer.Option("--format", help="text or structured (cells with colours and attributes).")] = "text",
    scrollback: Annotated[bool, typer.Option("--scrollback", help="Also the lines that scrolled off the top.")] = False,
) -> int:
    from agent_tty.protocol.errors import invalid

    if format_ not in ("text", "structured"):
        raise invalid(f"invalid --format {format_!r}: use text or structured", value=format_)
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import observe

    result = observe.snapshot(cli_engine(), session_id, format_ == "structured", scrollback)
    human = "\n".join([*result.get("scrollback", []), *result["lines"]]).rstrip("\n")
    emit(result, human)
    return 0
