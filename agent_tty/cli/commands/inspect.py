"""agent-tty inspect ID: the whole manifest plus derived facts."""

from __future__ import annotations

import json

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(session_id: Annotated[str, typer.Argument(metavar="ID", help="The session id.")]) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops.sessions import inspect

    result = inspect(cli_engine(), session_id)
    emit(result, json.dumps(result, indent=2, allow_nan=False))
    return 0
