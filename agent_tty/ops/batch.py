"""`batch`: input and wait steps in order, each through its own command's operation, one record a step.

A step is the operation its command calls (ops/drive.py, ops/observe.py), checked by the same
checks, judged by the same judgement (`run_failure`, `wait_failure`): a step cannot differ from
the command it names. What the batch adds is the order, the anchor of each wait (the seq of the
input step before it, as an agent would pass `--after-seq`), fail-fast or keep-going, and the
records (docs/adr/0042).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command ~2 ms at start-up (issue 26)
    from collections.abc import Callable
    from typing import Any

    from agent_tty.lifecycle.engine import Engine
    from agent_tty.protocol.errors import AgentTtyError

KEYS: dict[str, tuple[str, ...]] = {
    "run": ("command", "file", "timeout", "wait"),
    "type": ("text",),
    "paste": ("text", "file"),
    "sendKeys": ("keys",),
    "wait": ("text", "regex", "screen_stable_ms", "idle_ms", "exit", "after_seq", "timeout", "output"),
}
"""Each kind's keys besides `kind`: the API's (and MCP's) parameter names of its command (ADR 0028)."""

INPUT_KINDS = ("run", "type", "paste", "sendKeys")
STEP_FIELDS: dict[str, Any] = {
    "status": "not-run",
    "durationMs": None,
    "seq": None,
    "baseline": None,
    "matched": None,
    "timedOut": None,
    "screenHash": None,
    "exitCode": None,
    "error": None,
    "result": None,
}
"""One shape for every step's record, null where it does not apply or the step did not run."""


class Terminated(BaseException):
    """SIGTERM while a batch runs: the CLI's handler raises it, as Python raises
    KeyboardInterrupt for SIGINT, so the step in flight is recorded as interrupted."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Step:
    """A checked step: its kind, its keys' values, and the call that runs it."""

    __slots__ = ("index", "kind", "values")

    def __init__(self, index: int, kind: str, values: dict[str, Any]) -> None:
        self.index = index
        self.kind = kind
        self.values = values


# ---------------------------------------------------------------------- checking


def parse_steps(text: str, what: str = "STEPS") -> list[Any]:
    """The JSON text of a step list (the CLI's STEPS or --file)."""
    import json

    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    try:
        steps = json.loads(text)
    except ValueError as err:
        raise AgentTtyError(ErrorCode.USAGE, f"{what} is not JSON: {err}") from None
    return steps


def check_steps(steps: Any) -> list[Step]:
    """Every step checked before any runs: USAGE for the list's shape, an unknown kind or key and
    a value of the wrong type; the command's own error (INVALID_INPUT) for a value it refuses;
    both name the step (`details.step`, from 0). Exit 2 either way, and nothing was sent."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    if not isinstance(steps, list):
        raise AgentTtyError(ErrorCode.USAGE, f"the steps must be a JSON array of step objects, not {_json_type(steps)}")
    if not steps:
        raise AgentTtyError(ErrorCode.USAGE, "no steps: give at least one, e.g. [{\"kind\": \"run\", \"command\": \"make\"}]")
    checked = []
    for index, step in enumerate(steps):
        try:
            checked.append(_check_step(index, step))
        except AgentTtyError as err:
            raise AgentTtyError(err.code, f"step {index}{_kind_of(step)}: {err.message}", **{**err.details, "step": index}) from None
    return checked


def _kind_of(step: Any) -> str:
    kind = step.get("kind") if isinstance(step, dict) else None
    return f" ({kind})" if isinstance(kind, str) and kind in KEYS else ""


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    names = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


def _usage(message: str, **details: object) -> AgentTtyError:
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    return AgentTtyError(ErrorCode.USAGE, message, **details)


def _check_step(index: int, step: Any) -> Step:
    import difflib

    if not isinstance(step, dict):
        raise _usage(f"a step is an object with a `kind`, not {_json_type(step)}")
    kind = step.get("kind")
    if not isinstance(kind, str) or kind not in KEYS:
        close = difflib.get_close_matches(str(kind), KEYS, n=1, cutoff=0.5) if isinstance(kind, str) else []
        hint = f"; did you mean {close[0]!r}?" if close else ""
        given = "no `kind`" if kind is None else f"unknown kind {kind!r}"
        raise _usage(f"{given}{hint} (kinds: {', '.join(KEYS)})", kind=kind if isinstance(kind, str) else None)
    known = KEYS[kind]
    for key in step:
        if key != "kind" and key not in known:
            squashed = {name.replace("_", "").lower(): name for name in known}
            close = squashed.get(str(key).replace("_", "").replace("-", "").lower())
            hint = f"; did you mean {close!r}?" if close else ""
            raise _usage(f"unknown key {key!r}{hint} ({kind} takes {', '.join(known)})", key=key)
    values = {key: value for key, value in step.items() if key != "kind"}
    return Step(index, kind, _CHECKS[kind](values))


def _string(values: dict[str, Any], key: str, required: bool = False) -> str | None:
    value = values.get(key)
    if value is None:
        if required:
            raise _usage(f"`{key}` is required (a string)", key=key)
        return None
    if not isinstance(value, str):
        raise _usage(f"`{key}` must be a string, not {_json_type(value)}", key=key)
    return value


def _flag(values: dict[str, Any], key: str, default: bool) -> bool:
    value = values.get(key, default)
    if not isinstance(value, bool):
        raise _usage(f"`{key}` must be true or false, not {_json_type(value)}", key=key)
    return value


def _timeout_ms(values: dict[str, Any], default_ms: int) -> int | None:
    """`timeout`: seconds as a number (the API's), or a duration as the CLI's --timeout takes it
    (`2s`, `500ms`, a bare number is seconds); 0 waits as long as it takes."""
    from agent_tty.protocol.values import parse_duration_ms, timeout_seconds_ms

    value = values.get("timeout")
    if value is None:
        return default_ms
    if isinstance(value, str):
        return parse_duration_ms(value, "timeout") or None
    return timeout_seconds_ms(value, "timeout")


def _quiet_ms(values: dict[str, Any], key: str) -> int | None:
    """`screen_stable_ms`, `idle_ms`: milliseconds as a number (the API's), or a duration as the
    CLI's --screen-stable-ms takes it (a bare number is milliseconds)."""
    from agent_tty.protocol.values import parse_duration_ms, positive_ms

    value = values.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return parse_duration_ms(value, key, bare_unit="ms")
    return positive_ms(value, key)


def _check_run(values: dict[str, Any]) -> dict[str, Any]:
    from agent_tty.ops import drive

    from agent_tty.protocol.errors import invalid

    command, file = _string(values, "command"), _string(values, "file")
    if (command is None) == (file is None):
        raise invalid("give `command` or `file`, not both")
    command = drive.run_command_text(command, file)  # the file is read now: a missing one runs nothing
    drive.check_run_command(command)
    return {"command": command, "timeout_ms": _timeout_ms(values, drive.RUN_TIMEOUT_MS), "wait": _flag(values, "wait", True)}


def _check_type(values: dict[str, Any]) -> dict[str, Any]:
    from agent_tty.ops.live import text_chunks

    text = _string(values, "text", required=True)
    assert text is not None
    text_chunks(text)  # the size bound type refuses, before anything is sent
    return {"text": text}


def _check_paste(values: dict[str, Any]) -> dict[str, Any]:
    from agent_tty.ops.live import text_chunks
    from agent_tty.protocol.errors import invalid

    text, file = _string(values, "text"), _string(values, "file")
    if (text is None) == (file is None):
        raise invalid("give `text` or `file`, not both")
    if text is not None:
        text_chunks(text)
    else:
        assert file is not None
        try:
            with open(file, "rb"):  # read when the step runs, in parts, as paste --file reads it
                pass
        except OSError as err:
            raise invalid(f"cannot read `file` {file!r}: {err.strerror}", value=file) from None
    return {"text": text, "file": file}


def _check_send_keys(values: dict[str, Any]) -> dict[str, Any]:
    from agent_tty.terminal.keys import validate_keys

    keys = values.get("keys")
    if not isinstance(keys, list) or not keys or not all(isinstance(key, str) for key in keys):
        raise _usage('`keys` must be a non-empty array of key names, e.g. ["Enter"] or ["C-c"]', key="keys")
    validate_keys(keys)
    return {"keys": keys}


def _check_wait(values: dict[str, Any]) -> dict[str, Any]:
    from agent_tty.ops import observe
    from agent_tty.ops.names import PYTHON

    after = values.get("after_seq")
    if after is not None and (isinstance(after, bool) or not isinstance(after, (int, str))):
        raise _usage(f"`after_seq` must be a seq number or \"last\", not {_json_type(after)}", key="after_seq")
    checked = {
        "text": _string(values, "text"),
        "regex": _string(values, "regex"),
        "stable_ms": _quiet_ms(values, "screen_stable_ms"),
        "idle_ms": _quiet_ms(values, "idle_ms"),
        "exit": _flag(values, "exit", False),
        "after_seq": after,
    }
    observe.check_wait(**checked, names=PYTHON)
    checked["timeout_ms"] = _timeout_ms(values, observe.WAIT_TIMEOUT_MS)
    checked["output"] = _flag(values, "output", False)
    checked["anchored"] = "after_seq" not in values
    return checked


_CHECKS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "run": _check_run,
    "type": _check_type,
    "paste": _check_paste,
    "sendKeys": _check_send_keys,
    "wait": _check_wait,
}


# ---------------------------------------------------------------------- running


def _call(engine: Engine, session_id: str, step: Step, anchor: int | None) -> tuple[dict[str, Any], AgentTtyError | None]:
    """The step's operation, as its command calls it: its result, and why it failed (or None)."""
    from agent_tty.ops import drive, observe
    from agent_tty.ops.names import PYTHON

    v = step.values
    if step.kind == "run":
        result = drive.run(engine, session_id, v["command"], v["timeout_ms"], wait=v["wait"])
        return result, drive.run_failure(result)
    if step.kind == "type":
        return drive.type_text(engine, session_id, v["text"]), None
    if step.kind == "paste":
        return drive.paste(engine, session_id, v["text"], v["file"]), None
    if step.kind == "sendKeys":
        return drive.send_keys(engine, session_id, v["keys"]), None
    result = observe.wait(
        engine,
        session_id,
        text=v["text"],
        regex=v["regex"],
        stable_ms=v["stable_ms"],
        idle_ms=v["idle_ms"],
        exit=v["exit"],
        after_seq=anchor if v["anchored"] else v["after_seq"],
        timeout_ms=v["timeout_ms"],
        output=v["output"],
        names=PYTHON,
    )
    return result, observe.wait_failure(result)


def _error(err: AgentTtyError) -> dict[str, Any]:
    return {"code": err.code.value, "message": err.message, "details": err.details}


def run_batch(
    engine: Engine,
    session_id: str,
    steps: list[Step],
    keep_going: bool = False,
    on_step: Callable[[dict[str, Any]], None] | None = None,
    catch_interrupts: bool = False,
) -> dict[str, Any]:
    """Run checked steps in order; `on_step` gets each record as its step ends. Fail-fast: after
    a failed step the rest are `not-run`, unless `keep_going`. SIGINT (KeyboardInterrupt) or
    Terminated: the step in flight is `interrupted`, the rest `not-run`; with `catch_interrupts`
    (the CLI) the result is returned, else the exception goes on with the result as `.batch`."""
    import os
    import signal
    import time

    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    records = [{"index": step.index, "kind": step.kind, **STEP_FIELDS} for step in steps]
    summary: dict[str, Any] = {"sessionId": session_id, "status": "completed", "exitCode": 0, "failedStep": None, "interruptedBy": None}
    anchor: int | None = None  # the seq of the latest input step: the baseline of the waits after it
    clock = [0.0]  # when the step in flight started
    try:
        for step, record in zip(steps, records):
            if summary["failedStep"] is not None and not keep_going:
                break
            if step.kind == "wait":
                record["baseline"] = anchor if step.values["anchored"] else step.values["after_seq"]
            record["status"] = "running"
            started = clock[0] = time.monotonic()
            try:
                result, failure = _call(engine, session_id, step, anchor)
            except AgentTtyError as err:
                result, failure = None, err
            except Exception as err:  # a bug: this step's INTERNAL_ERROR, never a traceback (CLI-CONTRACT.md)
                if os.environ.get("AGENT_TTY_DEBUG") == "1":
                    raise
                result, failure = None, AgentTtyError(ErrorCode.INTERNAL_ERROR, f"{type(err).__name__}: {err}")
            record["durationMs"] = round((time.monotonic() - started) * 1000)
            record["result"] = result
            if result is not None:
                record["seq"] = result.get("seq")
                if step.kind == "wait":
                    record.update(matched=result.get("matched"), timedOut=result.get("timedOut"), screenHash=result.get("screenHash"))
                elif record["seq"] is not None:
                    anchor = record["seq"]
            if failure is None:
                record.update(status="completed", exitCode=0)
            else:
                record.update(status="failed", exitCode=int(failure.exit_code), error=_error(failure))
                if summary["failedStep"] is None:
                    summary.update(status="failed", exitCode=int(failure.exit_code), failedStep=step.index)
            if on_step is not None:
                on_step(record)
    except (KeyboardInterrupt, Terminated) as stop:
        signum = stop.signum if isinstance(stop, Terminated) else int(signal.SIGINT)
        for record in records:
            if record["status"] == "running":
                record.update(status="interrupted", durationMs=round((time.monotonic() - clock[0]) * 1000))
                if on_step is not None:
                    on_step(record)
        summary.update(status="interrupted", exitCode=128 + signum, interruptedBy=signal.Signals(signum).name)
        result = {**summary, "steps": records}
        if not catch_interrupts:
            stop.batch = result  # type: ignore[union-attr]
            raise
        return result
    return {**summary, "steps": records}
