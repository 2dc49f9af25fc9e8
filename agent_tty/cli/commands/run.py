"""agent-tty run ID COMMAND: type a shell command and wait until it completed."""

from __future__ import annotations

from typing import Optional

import typer

from agent_tty.cli.output import emit



def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    shell_command: Optional[str] = typer.Argument(None, metavar="COMMAND"),
    file: Optional[str] = typer.Option(None, "--file", help="Run this file's lines instead of COMMAND."),
    timeout: Optional[str] = typer.Option(None, "--timeout", help="A duration (a bare number is seconds); 0 waits forever (default 30s)."),
    no_wait: bool = typer.Option(False, "--no-wait", help="Return once typed."),
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import drive
    from agent_tty.ops.live import parse_timeout_ms, read_input_file
    from agent_tty.protocol.errors import invalid

    if (shell_command is None) == (file is None):
        raise invalid("give COMMAND or --file, not both")
    if file is not None:
        shell_command = read_input_file(file).rstrip("\n")
    assert shell_command is not None
    timeout_ms = parse_timeout_ms(timeout, drive.RUN_TIMEOUT_MS)
    result = drive.run(cli_engine(), session_id, shell_command, timeout_ms, wait=not no_wait)
    if result["timedOut"]:
        emit(result, f"timed out waiting for the command to complete (seq {result['seq']})")
        return 11
    if result["ended"]:
        emit(result, f"the program ended before the command completed (exit code {result['exitCode']}, signal {result['exitSignal']})")
        return 4  # SESSION_NOT_RUNNING's code: the session is no longer running
    human = f"seq {result['seq']}" + (f", exit status {result['exitStatus']}" if result["completed"] else "")
    if result["output"]:
        human += "\n" + result["output"].rstrip("\n")
    emit(result, human)
    return 0
