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
    from agent_tty.ops.live import parse_timeout_ms

    shell_command = drive.run_command_text(shell_command, file)
    timeout_ms = parse_timeout_ms(timeout, drive.RUN_TIMEOUT_MS)
    result = drive.run(cli_engine(), session_id, shell_command, timeout_ms, wait=not no_wait)
    from agent_tty.cli.output import note

    failure = drive.run_failure(result)  # the same judgement a `batch` step makes
    if result["timedOut"]:
        emit(result, (result["output"] or "").rstrip("\n"))  # what it printed so far
        note(failure.message)
        return failure.exit_code
    if result["ended"]:
        emit(result, failure.message)
        return failure.exit_code  # 4: the session is no longer running
    if not result["completed"]:  # --no-wait
        emit(result, f"seq {result['seq']}")
        return 0
    # Text for scripts: stdout is the command's output alone; its status goes to stderr.
    emit(result, (result["output"] or "").rstrip("\n"))
    if failure is not None:
        note(failure.message)
        return failure.exit_code  # 12
    return 0
