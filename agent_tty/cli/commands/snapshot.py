"""agent-tty snapshot ID [--format text|structured] [--scrollback]."""

from __future__ import annotations

import typer

from agent_tty.cli.output import emit


def take(session_id: str, structured: bool, scrollback: bool):  # type: ignore[no-untyped-def]
    """The live host's snapshot, or, for an ended session, one replayed from its event log."""
    from agent_tty.cli.commands.live import call_live_or_none

    request = {"op": "snapshot", "structured": structured, "scrollback": scrollback}
    live, paths = call_live_or_none(session_id, request)
    if live is not None:
        return {**live, "source": "live"}, paths
    from agent_tty.terminal.replay import replay
    from agent_tty.terminal.screen import snapshot

    screen, seq = replay(paths.events)
    return {**snapshot(screen, seq, structured=structured, scrollback=scrollback), "source": "replay"}, paths


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    format_: str = typer.Option("text", "--format", help="text or structured (cells with colours and attributes)."),
    scrollback: bool = typer.Option(False, "--scrollback", help="Also the lines that scrolled off the top."),
) -> int:
    from agent_tty.protocol.errors import invalid

    if format_ not in ("text", "structured"):
        raise invalid(f"invalid --format {format_!r}: use text or structured", value=format_)
    result, _paths = take(session_id, format_ == "structured", scrollback)
    human = "\n".join([*result.get("scrollback", []), *result["lines"]]).rstrip("\n")
    emit({"sessionId": session_id, **result}, human)
    return 0
