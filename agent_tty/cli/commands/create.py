"""agent-tty create [OPTIONS] -- PROGRAM [ARGS]..."""

from __future__ import annotations

from typing import Optional

import typer

from agent_tty.cli.output import emit
from agent_tty.protocol.errors import invalid


def command(
    program: list[str] = typer.Argument(..., metavar="-- PROGRAM [ARGS]...", help="The program and its arguments."),
    name: Optional[str] = typer.Option(None, "--name", help="A label shown by list and inspect."),
    cols: int = typer.Option(80, "--cols", help="Terminal width."),
    rows: int = typer.Option(24, "--rows", help="Terminal height."),
    cwd: Optional[str] = typer.Option(None, "--cwd", help="Working directory of the program."),
    env: list[str] = typer.Option([], "--env", help="K=V for the program's environment (repeatable)."),
    term: str = typer.Option("xterm-256color", "--term", help="TERM of the program."),
    idle_timeout: Optional[str] = typer.Option(
        None, "--idle-timeout", help="Hang up the program after this long without input or output (e.g. 30m)."
    ),
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import sessions
    from agent_tty.protocol.values import parse_duration_ms

    extra: dict[str, str] = {}
    for item in env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise invalid(f"invalid --env {item!r}: expected KEY=VALUE", value=item)
        extra[key] = value
    idle_ms = None
    if idle_timeout is not None:
        idle_ms = parse_duration_ms(idle_timeout, "--idle-timeout")
        if idle_ms <= 0:
            raise invalid("--idle-timeout must be more than 0", value=idle_timeout)
    result = sessions.create(
        cli_engine(), program, name=name, cols=cols, rows=rows, cwd=cwd, env=extra, term=term, idle_timeout_ms=idle_ms
    )
    emit(result, result["sessionId"])
    return 0
