"""agent-tty create [OPTIONS] -- PROGRAM [ARGS]..."""

from __future__ import annotations

from agent_tty.cli.output import emit
from agent_tty.protocol.errors import invalid

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    program: Annotated[list[str], typer.Argument(metavar="-- PROGRAM [ARGS]...", help="The program and its arguments.")],
    name: Annotated[str | None, typer.Option("--name", help="A label shown by list and inspect.")] = None,
    cols: Annotated[int, typer.Option("--cols", help="Terminal width.")] = 80,
    rows: Annotated[int, typer.Option("--rows", help="Terminal height.")] = 24,
    cwd: Annotated[str | None, typer.Option("--cwd", help="Working directory of the program.")] = None,
    env: Annotated[list[str], typer.Option("--env", help="K=V for the program's environment (repeatable).")] = [],  # noqa: B006 - typer's default; never mutated
    term: Annotated[str, typer.Option("--term", help="TERM of the program.")] = "xterm-256color",
    idle_timeout: Annotated[str | None, typer.Option("--idle-timeout", help="Hang up the program after this long without input or output (e.g. 30m).")] = None,
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
