"""agent-tty batch ID STEPS | --file F [--keep-going]: input and wait steps in order, one record each."""

from __future__ import annotations

from agent_tty.cli.output import GLOBALS, emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated, Any

    import typer


def command(
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    steps: Annotated[str | None, typer.Argument(metavar="STEPS", help='A JSON array of steps: [{"kind": "run", "command": "make"}, {"kind": "wait", "text": "done"}].')] = None,
    file: Annotated[str | None, typer.Option("--file", help="Read the steps from this JSON file (- for stdin) instead of STEPS.")] = None,
    keep_going: Annotated[bool, typer.Option("--keep-going", help="Run the later steps after one failed (default: stop at the first failure).")] = False,
) -> int:
    import signal
    import sys

    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import batch
    from agent_tty.ops.live import read_input_file
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode
    from agent_tty.protocol.rpc import ConnectionPool

    if (steps is None) == (file is None):
        raise AgentTtyError(ErrorCode.USAGE, "give STEPS or --file, not both")
    if file == "-":
        text = sys.stdin.read()
    else:
        text = read_input_file(file) if file is not None else str(steps)
    plan = batch.check_steps(batch.parse_steps(text, "STEPS" if file is None else f"--file {file!r}"))

    engine = cli_engine()
    engine.connections = ConnectionPool()  # one connection to the host for every step
    printed: set[int] = set()

    def show(record: dict[str, Any]) -> None:
        if not GLOBALS.json:
            printed.add(record["index"])
            emit(record, _line(record))

    def stop(signum: int, _frame: object) -> None:
        # A second signal while the envelope is flushed does not cut it short.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise batch.Terminated(signum)

    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    for number, handler in before.items():
        if handler is not signal.SIG_IGN:  # a batch started with SIGINT ignored keeps ignoring it
            signal.signal(number, stop)
    try:
        result = batch.run_batch(engine, session_id, plan, keep_going, on_step=show, catch_interrupts=True)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if GLOBALS.json:
            emit(result)
        else:
            for record in result["steps"]:
                if record["index"] not in printed:
                    emit(record, _line(record))
    finally:
        engine.connections.close()
        for number, handler in before.items():
            signal.signal(number, handler)
    return int(result["exitCode"])


def _line(record: dict[str, Any]) -> str:
    """One line for a step: `step 2 (wait): completed in 812 ms, matched at seq 9`."""
    head = f"step {record['index']} ({record['kind']}): {record['status']}"
    status = record["status"]
    if status == "not-run":
        return head
    took = f" in {record['durationMs']} ms" if status != "interrupted" else f" after {record['durationMs']} ms"
    if status == "failed":
        error = record["error"]
        return f"{head}{took}: {error['message']} [{error['code']}]"
    if status == "completed" and record["kind"] == "wait":
        return f"{head}{took}, matched at seq {record['seq']}"
    seq = f", seq {record['seq']}" if record["seq"] is not None else ""
    return f"{head}{took}{seq}"
