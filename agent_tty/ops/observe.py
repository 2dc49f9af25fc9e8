"""Observing a session, live or ended: wait and snapshot."""

from __future__ import annotations

from agent_tty.ops.live import call_live_or_none, rpc_timeout
from agent_tty.ops.names import CLI, Names

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command ~2 ms at start-up (issue 26)
    from typing import Any

    from agent_tty.lifecycle.engine import Engine

WAIT_TIMEOUT_MS = 30_000  # as run's: an agent's wait never hangs by default


def wait(
    engine: Engine,
    session_id: str,
    *,
    text: str | None = None,
    regex: str | None = None,
    stable_ms: int | None = None,
    idle_ms: int | None = None,
    exit: bool = False,
    after_seq: int | str | None = None,
    timeout_ms: int | None = WAIT_TIMEOUT_MS,
    output: bool = False,
    names: Names = CLI,
) -> dict[str, Any]:
    """Until one condition holds: `matched` (or `timedOut`) in the result; SESSION_NOT_RUNNING
    when the session ended before it matched. `after_seq`: a seq or "last" (the last input);
    `timeout_ms` None waits forever. Errors name the parameters as `names` spells them."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    check_wait(text=text, regex=regex, stable_ms=stable_ms, idle_ms=idle_ms, exit=exit, after_seq=after_seq, names=names)
    request: dict[str, Any] = {
        "op": "wait",
        "text": text,
        "regex": regex,
        "stableMs": stable_ms,
        "idleMs": idle_ms,
        "exit": exit,
        "afterSeq": after_seq,
        "timeoutMs": timeout_ms,
    }
    if output:
        request["output"] = True
    live, paths = call_live_or_none(engine, session_id, request, timeout=rpc_timeout(timeout_ms))
    result = {"sessionId": session_id, **(live if live is not None else _wait_offline(paths, request))}
    if result.get("matched") or result.get("timedOut"):
        return result
    raise AgentTtyError(
        ErrorCode.SESSION_NOT_RUNNING,
        f"session {session_id} ended before the wait matched",
        sessionId=session_id,
        exitCode=result.get("exitCode"),
        exitSignal=result.get("exitSignal"),
    )


def check_wait(
    *,
    text: str | None = None,
    regex: str | None = None,
    stable_ms: int | None = None,
    idle_ms: int | None = None,
    exit: bool = False,
    after_seq: int | str | None = None,
    names: Names = CLI,
) -> None:
    """What `wait` refuses before it asks the host (a `batch` checks every step with it first)."""
    import re

    from agent_tty.protocol.errors import invalid

    conditions = ("text", "regex", "screen_stable_ms", "idle_ms", "exit")
    chosen = [n for n, v in zip(conditions, (text, regex, stable_ms, idle_ms, exit or None)) if v is not None]
    if len(chosen) != 1:
        given = f" (given: {names.one_of(*chosen)})" if chosen else ""
        raise invalid(f"give exactly one of {names.one_of(*conditions)}{given}")
    if regex is not None:
        try:
            re.compile(regex)
        except re.error as err:
            raise invalid(f"invalid {names.of('regex')} {regex!r}: {err}", value=regex) from None
    if isinstance(after_seq, str) and after_seq != "last" or isinstance(after_seq, int) and after_seq < 0:
        raise invalid(f"invalid {names.of('after_seq')} {after_seq!r}: a seq number (0 or more) or `last`", value=after_seq)


def wait_failure(result: dict[str, Any]):  # type: ignore[no-untyped-def]
    """A wait that did not match timed out (exit 11): the error a `batch` step reports for it,
    or None when it matched. (A session that ended first is raised by `wait` itself.)"""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    if result.get("matched"):
        return None
    return AgentTtyError(ErrorCode.WAIT_TIMEOUT, f"timed out (seq {result.get('seq')})", seq=result.get("seq"))


def _wait_offline(paths, request: dict[str, Any]) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """An ended session's screen can no longer change: judge its last screen once. The log is
    streamed, twice at most (what it ends with, then the screen), never held whole."""
    from agent_tty.host.terminal import baseline_of, compile_wait, matches_since
    from agent_tty.terminal.regex_budget import search
    from agent_tty.terminal.replay import open_log, replay_events
    from agent_tty.terminal.screen import search_text

    kind, pattern, _quiet = compile_wait(request)
    last, latest_input, ended = 0, None, {}
    with open_log(paths.events) as (_header, events):
        for event in events:
            last = event.seq
            if event.type in ("input", "marker"):
                latest_input = event.seq
            elif event.type == "exit":
                ended = {"exitCode": event.exit_code, "exitSignal": event.exit_signal}
    after = request.get("afterSeq")
    if request.get("output"):
        from agent_tty.terminal.output import output_after, output_fields, plain_text

        with open_log(paths.events) as (_header, events):
            printed = output_after(events, after)
        matched = pattern is None or search(pattern, plain_text(printed))
        return {"matched": matched, "ended": True, "timedOut": False, "seq": last, **ended, **output_fields(printed)}
    if kind != "text" and kind != "regex":
        return {"matched": True, "timedOut": False, "seq": last, **ended}
    assert pattern is not None
    if after == "last":
        after = latest_input
    baseline: list = []

    def at_baseline(screen, event) -> None:  # type: ignore[no-untyped-def]
        if event.seq == after:
            baseline[:] = baseline_of(pattern, search_text(screen))

    with open_log(paths.events) as (header, events):
        screen, _seq = replay_events(header, events, on_event=at_baseline if after is not None else None)
    from agent_tty.terminal.screen import screen_hash

    matched = matches_since(pattern, search_text(screen), baseline)
    return {"matched": matched, "ended": True, "timedOut": False, "seq": last, "screenHash": screen_hash(screen.lines()), **ended}


def take_snapshot(  # type: ignore[no-untyped-def]
    engine: Engine, session_id: str, structured: bool = False, scrollback: bool = False, max_cells: int | None = None
):
    """The live host's snapshot, or, for an ended session, one replayed from its event log;
    with the session's paths. `max_cells`: a structured snapshot of more cells is INVALID_INPUT,
    refused by the host before it reads a cell (docs/adr/0025)."""
    from agent_tty.protocol.values import check_cells

    request: dict[str, Any] = {"op": "snapshot", "structured": structured, "scrollback": scrollback}
    if structured and max_cells is not None:
        request["maxCells"] = max_cells
    live, paths = call_live_or_none(engine, session_id, request)
    if live is not None:
        if structured:
            # A host started by an older agent-tty ignores maxCells: its answer is refused here.
            check_cells(live["cols"], live["rows"], max_cells)
        return {**live, "source": "live"}, paths
    from agent_tty.terminal.replay import replay
    from agent_tty.terminal.screen import snapshot as screen_snapshot

    screen, seq = replay(paths.events)
    return {**screen_snapshot(screen, seq, structured=structured, scrollback=scrollback, max_cells=max_cells), "source": "replay"}, paths


def snapshot(
    engine: Engine, session_id: str, structured: bool = False, scrollback: bool = False, max_cells: int | None = None
) -> dict[str, Any]:
    result, _paths = take_snapshot(engine, session_id, structured, scrollback, max_cells)
    return {"sessionId": session_id, **result}
