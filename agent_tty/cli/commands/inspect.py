"""agent-tty inspect ID: the whole manifest plus derived facts."""

from __future__ import annotations

import json

import typer

from agent_tty.cli.output import emit


def command(session_id: str = typer.Argument(..., metavar="ID", help="The session id.")) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops.sessions import inspect

    result = inspect(cli_engine(), session_id)
    emit(result, json.dumps(result, indent=2, allow_nan=False))
    return 0
