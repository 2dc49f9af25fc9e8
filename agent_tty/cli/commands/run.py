"""agent-tty run ID COMMAND: type a shell command and wait until it completed."""

from __future__ import annotations

from typing import Optional

import typer

from agent_tty.cli.output import emit

DEFAULT_TIMEOUT_MS = 30_000


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    shell_command: Optional[str] = typer.Argument(None, metavar="COMMAND"),
    file: Optional[str] = typer.Option(None, "--file", help="Run this file's lines instead of COMMAND."),
    timeout: Optional[str] = typer.Option(None, "--timeout", help="A duration (a bare number is seconds); 0 waits forever (default 30s)."),
    no_wait: bool = typer.Option(False, "--no-wait", help="Return once typed."),
) -> int:
    from agent_tty.cli.commands.live import call_live, parse_timeout_ms, read_input_file, rpc_timeout
    from agent_tty.protocol.errors import invalid

    if (shell_command is None) == (file is None):
        raise invalid("give COMMAND or --file, not both")
    if file is not None:
        shell_command = read_input_file(file).rstrip("\n")
    assert shell_command is not None
    if not shell_command.strip():
        raise invalid("the command is empty")
    timeout_ms = parse_timeout_ms(timeout, DEFAULT_TIMEOUT_MS)
    request = {"op": "run", "command": shell_command, "wait": not no_wait, "timeoutMs": timeout_ms}
    result = call_live(session_id, request, timeout=rpc_timeout(timeout_ms))
    result = {"sessionId": session_id, **result}
    if result.get("timedOut"):
        emit(result, f"timed out waiting for the command to complete (seq {result['seq']})")
        return 11
    human = f"seq {result['seq']}" + (f", exit status {result['exitStatus']}" if "exitStatus" in result else "")
    emit(result, human)
    return 0
