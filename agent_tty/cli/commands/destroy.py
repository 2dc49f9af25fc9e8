"""agent-tty destroy ID [--force]."""

from __future__ import annotations

import signal
import subprocess
import sys
from typing import Any, NoReturn

from agent_tty.cli.output import GLOBALS, emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    session_id: Annotated[str, typer.Argument(metavar="ID", help="The session id.")],
    force: Annotated[bool, typer.Option("--force", "-f", help="Kill the host and the program group without the host's help.")] = False,
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops.destroy import destroy

    result = destroy(cli_engine(), session_id, force, rerun=_rerun_this_command)
    human = f"{session_id} destroyed"
    if result.get("manifestUnreadable"):
        human += f"\nnote: its manifest cannot be read ({result['manifestUnreadable']}); the destroyed marker records the end"
    if result.get("warning"):
        human += f"\nwarning: {result['warning']}"
    emit(result, human)
    return 0


def _rerun_this_command(session_id: str, _force: bool) -> NoReturn:
    """ReRunsInNewSession: this same command, detached in a new session, answers on our stdout
    (we may die in the kill it makes); we exit with its exit code."""
    from agent_tty.ops.destroy import rerun_env
    from agent_tty.platform.system import current

    argv = list(GLOBALS.argv)
    if GLOBALS.resolved is not None:
        # The copy destroys the session this one resolved, not whatever the name means by then.
        at = len(argv) - 1 - argv[::-1].index(GLOBALS.resolved["ref"])
        argv[at] = session_id
    child = subprocess.Popen([sys.executable, "-m", "agent_tty", *argv], env=rerun_env(), **current().detached())

    def forward(signum: int, _frame: Any) -> None:
        child.send_signal(signum)

    # Forward what a user sends; not SIGHUP, which the end of the program's terminal sends
    # us while the copy does its work.
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, forward)
    code = child.wait()
    raise SystemExit(128 - code if code < 0 else code)
