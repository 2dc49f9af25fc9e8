"""agent-tty run ID COMMAND: type a shell command and wait until it completed."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    shell_command: Annotated[str | None, typer.Argument(metavar="COMMAND")] = None,
    file: Annotated[str | None, typer.Option("--file", help="Run this file's lines instead of COMMAND.")] = None,
    timeout: Annotated[str | None, typer.Option("--timeout", help="A duration (a bare number is seconds); 0 waits forever (default 30s).")] = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once typed.")] = False,
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
    from agent_tty.cli.output import note
    from agent_tty.protocol.errors import ExitCode

    if result["timedOut"]:
        emit(result, (result["output"] or "").rstrip("\n"))  # what it printed so far
        if not result["typed"]:
            note("timed out before the shell read the line: nothing was typed (a command may hold the terminal)")
        else:
            note(f"timed out waiting for the command to complete (seq {result['seq']})")
        return ExitCode.WAIT_TIMEOUT
    if result["ended"]:
        how = f"signal {result['exitSignal']}" if result["exitSignal"] is not None else f"exit code {result['exitCode']}"
        emit(result, f"the program ended before the command completed ({how})")
        return ExitCode.SESSION_NOT_RUNNING  # the session is no longer running
    if not result["completed"]:  # --no-wait
        emit(result, f"seq {result['seq']}")
        return ExitCode.OK
    # Text for scripts: stdout is the command's output alone; its status goes to stderr.
    emit(result, (result["output"] or "").rstrip("\n"))
    if result["exitStatus"] != 0:
        note(f"exit status {result['exitStatus']} (seq {result['seq']})")
        return ExitCode.COMMAND_FAILED
    return ExitCode.OK
