"""agent-tty wait ID (--text S | --regex R | --screen-stable-ms MS | --idle-ms MS | --exit) [--output]."""

from __future__ import annotations

from typing import Any, Optional

import typer

from agent_tty.cli.output import emit

DEFAULT_TIMEOUT_MS = 30_000  # as run's: an agent's wait never hangs by default


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    text: Optional[str] = typer.Option(None, "--text", help="Until this text is on the screen (or in scrollback)."),
    regex: Optional[str] = typer.Option(None, "--regex", help="Until this regular expression matches."),
    screen_stable_ms: Optional[str] = typer.Option(
        None, "--screen-stable-ms", help="Until the screen did not change for this long (a bare number is ms; 2s works too)."
    ),
    idle_ms: Optional[str] = typer.Option(
        None, "--idle-ms", help="Until the program printed nothing for this long (a bare number is ms; 2s works too)."
    ),
    exit_: bool = typer.Option(False, "--exit", help="Until the program exited."),
    after_seq: Optional[str] = typer.Option(
        None, "--after-seq", help="Count only what appeared after event seq N, or after the session's last input (`last`)."
    ),
    timeout: Optional[str] = typer.Option(None, "--timeout", help="A duration (a bare number is seconds); 0 waits forever (default 30s)."),
    output: bool = typer.Option(
        False, "--output", help="--text/--regex: only in what the program printed after the input's line (its echo left out)."
    ),
) -> int:
    import re

    from agent_tty.cli.commands.live import call_live_or_none, parse_timeout_ms, rpc_timeout
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode, invalid

    chosen = [n for n, v in (("--text", text), ("--regex", regex), ("--screen-stable-ms", screen_stable_ms), ("--idle-ms", idle_ms)) if v is not None]
    if exit_:
        chosen.append("--exit")
    if len(chosen) != 1:
        raise invalid("give exactly one of --text, --regex, --screen-stable-ms, --idle-ms, --exit")
    if output and text is None and regex is None:
        raise invalid("--output goes with --text or --regex")
    if regex is not None:
        try:
            re.compile(regex)
        except re.error as err:
            raise invalid(f"invalid --regex {regex!r}: {err}", value=regex) from None
    from agent_tty.protocol.values import parse_duration_ms

    stable = None if screen_stable_ms is None else parse_duration_ms(screen_stable_ms, "--screen-stable-ms", bare_unit="ms")
    idle = None if idle_ms is None else parse_duration_ms(idle_ms, "--idle-ms", bare_unit="ms")
    baseline: int | str | None = None
    if after_seq is not None:
        if after_seq == "last":
            baseline = "last"
        elif after_seq.isdigit():
            baseline = int(after_seq)
        else:
            raise invalid(f"invalid --after-seq {after_seq!r}: a seq number (0 or more) or `last`", value=after_seq)
    timeout_ms = parse_timeout_ms(timeout, DEFAULT_TIMEOUT_MS)
    request: dict[str, Any] = {
        "op": "wait",
        "text": text,
        "regex": regex,
        "stableMs": stable,
        "idleMs": idle,
        "exit": exit_,
        "afterSeq": baseline,
        "timeoutMs": timeout_ms,
    }
    if output:
        request["output"] = True
    live, paths = call_live_or_none(session_id, request, timeout=rpc_timeout(timeout_ms))
    result = live if live is not None else _wait_offline(paths, request)
    result = {"sessionId": session_id, **result}
    if result.get("matched"):
        emit(result, f"matched at seq {result.get('seq')}")
        return 0
    if result.get("timedOut"):
        emit(result, "timed out")
        return 11
    raise AgentTtyError(
        ErrorCode.SESSION_NOT_RUNNING,
        f"session {session_id} ended before the wait matched",
        sessionId=session_id,
        exitCode=result.get("exitCode"),
        exitSignal=result.get("exitSignal"),
    )


def _wait_offline(paths, request: dict[str, Any]) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """An ended session's screen can no longer change: judge its last screen once. The log is
    streamed, twice at most (what it ends with, then the screen), never held whole."""
    from agent_tty.host.terminal import compile_wait
    from agent_tty.terminal.regex_budget import count, search
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
    if kind != "text" and kind != "regex":
        return {"matched": True, "timedOut": False, "seq": last, **ended}
    assert pattern is not None
    after = request.get("afterSeq")
    if request.get("output"):
        from agent_tty.terminal.output import output_after, plain_text

        with open_log(paths.events) as (_header, events):
            matched = search(pattern, plain_text(output_after(events, after)))
        return {"matched": matched, "ended": True, "timedOut": False, "seq": last, **ended}
    if after == "last":
        after = latest_input
    baseline = {"count": 0}

    def at_baseline(screen, event) -> None:  # type: ignore[no-untyped-def]
        if event.seq == after:
            baseline["count"] = count(pattern, search_text(screen))

    with open_log(paths.events) as (header, events):
        screen, _seq = replay_events(header, events, on_event=at_baseline if after is not None else None)
    found = count(pattern, search_text(screen))
    return {"matched": found > baseline["count"], "ended": True, "timedOut": False, "seq": last, **ended}
