"""Driving a live session: run, type, paste, send-keys, mark, resize, signal."""

from __future__ import annotations

from agent_tty.ops.live import call_live, file_chunks, rpc_timeout, send_input, text_chunks

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command ~2 ms at start-up (issue 26)
    from collections.abc import Iterable
    from typing import Any

    from agent_tty.lifecycle.engine import Engine

RUN_TIMEOUT_MS = 30_000
RUN_RESULT: dict[str, Any] = {
    "seq": None,
    "completed": False,
    "timedOut": False,
    "ended": False,
    "exitStatus": None,
    "markerSeq": None,
    "output": None,
    "outputTruncated": False,
    "exitCode": None,
    "exitSignal": None,
}
"""One shape for every outcome of `run` (completed, timed out, the program ended, no wait): the
same keys, null where unknown."""


def run(engine: Engine, session_id: str, command: str, timeout_ms: int | None = RUN_TIMEOUT_MS, wait: bool = True) -> dict[str, Any]:
    """Type a shell command and (unless `wait` is False) wait until it completed; `timeout_ms`
    None waits forever."""
    check_run_command(command)
    request = {"op": "run", "command": command, "wait": wait, "timeoutMs": timeout_ms}
    answer = call_live(engine, session_id, request, timeout=rpc_timeout(timeout_ms))
    result = {"sessionId": session_id, **RUN_RESULT, **{key: answer[key] for key in RUN_RESULT if key in answer}}
    if result["seq"] is None:  # a run that did not complete answers with the input's seq
        result["seq"] = answer.get("seq")
    result["typed"] = result["seq"] is not None  # null: the shell never read it in time (ADR 0031)
    return result


def check_run_command(command: str) -> None:
    """What `run` refuses before it sends anything (a `batch` checks every step with it first)."""
    from agent_tty.protocol.errors import invalid

    if not command.strip():
        raise invalid("the command is empty")


def run_command_text(command: str | None, file: str | None) -> str:
    """COMMAND, or the lines of `--file` without the last newline: exactly one of them."""
    from agent_tty.ops.live import read_input_file
    from agent_tty.protocol.errors import invalid

    if (command is None) == (file is None):
        raise invalid("give COMMAND or --file, not both")
    return read_input_file(file).rstrip("\n") if file is not None else str(command)


def run_failure(result: dict[str, Any]):  # type: ignore[no-untyped-def]
    """Why a run's result is not a success, as the error its exit code stands for (11 timed
    out, 4 the program ended, 12 a non-zero exit status), or None (completed with 0, or
    --no-wait). `run` exits with its code; a `batch` step reports it."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    if result["timedOut"]:
        if not result["typed"]:
            message = "timed out before the shell read the line: nothing was typed (a command may hold the terminal)"
        else:
            message = f"timed out waiting for the command to complete (seq {result['seq']})"
        return AgentTtyError(ErrorCode.WAIT_TIMEOUT, message, seq=result["seq"])
    if result["ended"]:
        how = f"signal {result['exitSignal']}" if result["exitSignal"] is not None else f"exit code {result['exitCode']}"
        return AgentTtyError(
            ErrorCode.SESSION_NOT_RUNNING,
            f"the program ended before the command completed ({how})",
            exitCode=result["exitCode"],
            exitSignal=result["exitSignal"],
        )
    if result["completed"] and result["exitStatus"] != 0:
        return AgentTtyError(ErrorCode.COMMAND_FAILED, f"exit status {result['exitStatus']} (seq {result['seq']})", exitStatus=result["exitStatus"])
    return None


def type_text(engine: Engine, session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, **send_input(engine, session_id, "type", text_chunks(text))}


def paste(engine: Engine, session_id: str, text: str | None = None, file: str | None = None) -> dict[str, Any]:
    from agent_tty.protocol.errors import invalid

    if (text is None) == (file is None):
        raise invalid("give TEXT or --file, not both")
    chunks: Iterable[str] = file_chunks(file) if file is not None else text_chunks(text or "")
    return {"sessionId": session_id, **send_input(engine, session_id, "paste", chunks)}


def send_keys(engine: Engine, session_id: str, keys: list[str]) -> dict[str, Any]:
    from agent_tty.terminal.keys import validate_keys

    validate_keys(keys)  # an unknown key is exit 2 before anything is sent
    return {"sessionId": session_id, **call_live(engine, session_id, {"op": "keys", "keys": keys})}


def mark(engine: Engine, session_id: str, label: str) -> dict[str, Any]:
    return {"sessionId": session_id, **call_live(engine, session_id, {"op": "mark", "label": label})}


def resize(engine: Engine, session_id: str, cols: int, rows: int) -> dict[str, Any]:
    from agent_tty.protocol.values import check_size

    check_size(cols, rows)
    return {"sessionId": session_id, **call_live(engine, session_id, {"op": "resize", "cols": cols, "rows": rows})}


def signal(engine: Engine, session_id: str, name: str) -> dict[str, Any]:
    from agent_tty.protocol.values import parse_signal

    number = parse_signal(name)
    return {"sessionId": session_id, **call_live(engine, session_id, {"op": "signal", "signal": number})}
