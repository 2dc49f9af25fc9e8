"""agent-tty dashboard [--all] [--select ID] [--once [--cols C --rows R]]: watch the Home's sessions."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    all_: Annotated[bool, typer.Option("--all", "-a", help="Also list ended sessions.")] = False,
    select: Annotated[str | None, typer.Option("--select", help="The session to mirror first: its id, name or an id prefix.")] = None,
    once: Annotated[bool, typer.Option("--once", help="Print one frame to stdout and exit (no terminal needed).")] = False,
    cols: Annotated[int | None, typer.Option("--cols", help="With --once: the frame's width (default: the terminal's, else 80).")] = None,
    rows: Annotated[int | None, typer.Option("--rows", help="With --once: the frame's height (default: the terminal's, else 24).")] = None,
) -> int:
    """A read-only, full-screen view for a human: the sessions (status, name, age, mechanism)
    and the selected one mirrored live from its event log. Keys: j/k or Up/Down switch, /
    searches by name or id, space pauses the mirror, q quits. It never writes to the Home and
    never connects to a session."""
    import os

    from agent_tty.protocol.errors import AgentTtyError, ErrorCode, invalid

    if not once and (cols is not None or rows is not None):
        raise invalid("--cols and --rows go with --once: the live dashboard takes its terminal's size")
    for label, value in (("--cols", cols), ("--rows", rows)):
        if value is not None and not 1 <= value <= 10_000:
            raise invalid(f"invalid {label} {value}: expected 1 to 10000", value=value)
    if not once and not (os.isatty(0) and os.isatty(1)):
        raise AgentTtyError(
            ErrorCode.USAGE,
            "dashboard needs a terminal on stdin and stdout (run it in a terminal or a tmux split); "
            "`agent-tty dashboard --once` prints one frame without one",
        )
    from agent_tty.cli.engine import cli_engine
    from agent_tty.dashboard.app import Dashboard

    dashboard = Dashboard(cli_engine(), all_=all_, select=select)
    if once:
        from agent_tty.dashboard.frame import frame, plain

        try:
            size = os.get_terminal_size(1)
            width, height = cols or size.columns, rows or size.lines
        except OSError:
            width, height = cols or 80, rows or 24
        dashboard.catch_up()
        shown = frame(dashboard.view(), width, height)
        result = dashboard.result(shown, width)
        dashboard.close()
        emit(result, "\n".join(plain(shown)))
        return 0
    from agent_tty.dashboard.app import run_terminal

    code, result = run_terminal(dashboard)
    from agent_tty.cli.output import GLOBALS

    if GLOBALS.json:
        emit(result, "")
    return code
