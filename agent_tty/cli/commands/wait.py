"""agent-tty wait ID (--text S | --regex R | --screen-stable-ms MS | --idle-ms MS | --exit) [--output]."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    text: Annotated[str | None, typer.Option("--text", help="Until this text is on the screen (or in scrollback).")] = None,
    regex: Annotated[str | None, typer.Option("--regex", help="Until this regular expression matches.")] = None,
    screen_stable_ms: Annotated[str | None, typer.Option("--screen-stable-ms", help="Until the screen did not change for this long (a bare number is ms; 2s works too).")] = None,
    idle_ms: Annotated[str | None, typer.Option("--idle-ms", help="Until the program printed nothing for this long (a bare number is ms; 2s works too).")] = None,
    exit_: Annotated[bool, typer.Option("--exit", help="Until the program exited.")] = False,
    after_seq: Annotated[str | None, typer.Option("--after-seq", help="Count only what appeared after event seq N, or after the session's last input (`last`).")] = None,
    timeout: Annotated[str | None, typer.Option("--timeout", help="A duration (a bare number is seconds); 0 waits forever (default 30s).")] = None,
    output: Annotated[bool, typer.Option("--output", help="Return what the program printed after the input's line (its echo left out); --text/--regex search it instead of the screen.")] = False,
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops import observe
    from agent_tty.ops.live import parse_timeout_ms
    from agent_tty.protocol.errors import invalid
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
    timeout_ms = parse_timeout_ms(timeout, observe.WAIT_TIMEOUT_MS)
    result = observe.wait(
        cli_engine(),
        session_id,
        text=text,
        regex=regex,
        stable_ms=stable,
        idle_ms=idle,
        exit=exit_,
        after_seq=baseline,
        timeout_ms=timeout_ms,
        output=output,
    )
    failure = observe.wait_failure(result)  # the same judgement a `batch` step makes
    if output:
        # Text for scripts, as run's: stdout is what the program printed; a time-out goes to stderr.
        from agent_tty.cli.output import note

        emit(result, (result.get("output") or "").rstrip("\n"))
        if failure is None:
            return 0
        note(failure.message)
        return failure.exit_code
    if failure is None:
        emit(result, f"matched at seq {result.get('seq')}")
        return 0
    emit(result, "timed out")
    return failure.exit_code
