"""agent-tty list [--all]: sessions of the Home; reconciles the active ones it reads."""

from __future__ import annotations

import shlex

from agent_tty.cli.output import emit, table

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(all_: Annotated[bool, typer.Option("--all", "-a", help="Also show ended sessions.")] = False) -> int:
    from agent_tty.cli.commands.view import age_text
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops.sessions import list_sessions

    result, sessions = list_sessions(cli_engine(), all_)
    unreadable, leftovers = result["unreadable"], result["incomplete"]
    rows = [
        [m.session_id, m.status.value, str(m.child_pid or "-"), age_text(m.created_at), m.name or "", shlex.join(m.argv)]
        for m in sessions
    ]
    human = table(rows, ["ID", "STATUS", "PID", "AGE", "NAME", "COMMAND"]) if rows else "no sessions"
    for problem in unreadable:
        human += f"\n{problem['sessionId']}: unreadable: {problem['message']}"
    for leftover in leftovers:
        human += f"\n{leftover['sessionId']}: incomplete (no session.json), changed {leftover['ageSeconds']:.0f} s ago (gc removes it once nothing of it runs)"
    emit(result, human)
    return 0
