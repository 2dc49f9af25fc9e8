"""agent-tty create [OPTIONS] -- PROGRAM [ARGS]..."""

from __future__ import annotations

import os
from typing import Optional

import typer

from agent_tty.cli.output import GLOBALS, emit
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
    from agent_tty.lifecycle.create import CreateRequest, create
    from agent_tty.lifecycle.engine import engine_for
    from agent_tty.protocol.values import check_size, parse_duration_ms

    check_size(cols, rows)
    extra: dict[str, str] = {}
    for item in env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise invalid(f"invalid --env {item!r}: expected KEY=VALUE", value=item)
        extra[key] = value
    # Like a shell: the program starts in the caller's directory, and a relative program path
    # means the caller's (the host itself runs in /).
    directory = os.path.abspath(cwd) if cwd is not None else os.getcwd()
    if not os.path.isdir(directory):
        raise invalid(f"--cwd {cwd!r} is not a directory", value=cwd)
    if "/" in program[0] and not os.path.isabs(program[0]):
        program = [os.path.join(directory, program[0]), *program[1:]]
    idle_ms = None
    if idle_timeout is not None:
        idle_ms = parse_duration_ms(idle_timeout, "--idle-timeout")
        if idle_ms <= 0:
            raise invalid("--idle-timeout must be more than 0", value=idle_timeout)
    request = CreateRequest(
        argv=tuple(program),
        cols=cols,
        rows=rows,
        name=name,
        cwd=directory,
        env=extra,
        term=term,
        idle_timeout_ms=idle_ms,
    )
    engine = engine_for(GLOBALS.home)
    if name is not None:
        from agent_tty.cli.resolve import check_name_is_free

        check_name_is_free(engine, name)
    manifest = create(engine, request)
    result = {
        "sessionId": manifest.session_id,
        "status": manifest.status.value,
        "hostPid": manifest.host_pid,
        "childPid": manifest.child_pid,
        "cols": manifest.cols,
        "rows": manifest.rows,
        "mechanism": manifest.mechanism,
        "name": manifest.name,
    }
    emit(result, manifest.session_id)
    return 0
