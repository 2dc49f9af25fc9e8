"""agent-tty destroy ID [--force]."""

from __future__ import annotations

import signal
import subprocess

import typer

from agent_tty.cli.output import emit


def command(
    session_id: str = typer.Argument(..., metavar="ID", help="The session id."),
    force: bool = typer.Option(False, "--force", "-f", help="Kill the host and the program group without the host's help."),
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops.destroy import destroy

    result = destroy(cli_engine(), session_id, force, started=_forward_signals)
    human = f"{session_id} destroyed"
    if result.get("manifestUnreadable"):
        human += f"\nnote: its manifest cannot be read ({result['manifestUnreadable']}); the destroyed marker records the end"
    if result.get("warning"):
        human += f"\nwarning: {result['warning']}"
    emit(result, human)
    return 0


def _forward_signals(child: subprocess.Popen[str]) -> None:
    """A destroy from inside the program runs as a detached copy: what a user sends goes to it;
    not SIGHUP, which the end of the program's terminal sends us while the copy does its work."""

    def forward(signum: int, _frame: object) -> None:
        child.send_signal(signum)

    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, forward)
