"""agent-tty gc [--dry-run] [--older-than DUR] [--stale-only]."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would be removed; remove nothing.")] = False,
    older_than: Annotated[str | None, typer.Option("--older-than", help="Only sessions that ended longer ago (e.g. 1h).")] = None,
    stale_only: Annotated[bool, typer.Option("--stale-only", help="Only sessions whose host died (failed).")] = False,
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops.sessions import gc
    from agent_tty.protocol.values import parse_duration

    older_than_s = parse_duration(older_than, "--older-than") if older_than is not None else None
    result = gc(cli_engine(), dry_run, older_than_s, stale_only)
    removed = result["removedSessions"]
    verb = "would remove" if dry_run else "removed"
    lines = [f"{verb} {len(removed)} session(s)" + (": " + ", ".join(removed) if removed else "")]
    lines += _kept_lines(result["skippedSessions"])
    lines += [f"warning: plugin {name}'s sweep failed: {error}" for name, error in result.get("sweepErrors", {}).items()]
    emit(result, "\n".join(lines))
    return 0


SHOWN_PER_REASON = 3
"""Kept sessions listed one a line per reason; past it, one line counts them (live sessions are
the usual reason, and a Home of 300 of them is no list to read)."""


def _kept_lines(skipped: list[dict[str, str]]) -> list[str]:
    by_reason: dict[str, list[str]] = {}
    for kept in skipped:
        by_reason.setdefault(kept["reason"], []).append(kept["sessionId"])
    lines = []
    for reason, ids in by_reason.items():
        if len(ids) > SHOWN_PER_REASON:
            lines.append(f"kept {len(ids)} sessions: {reason} (their ids: --json)")
        else:
            lines += [f"kept {session_id}: {reason}" for session_id in ids]
    return lines
