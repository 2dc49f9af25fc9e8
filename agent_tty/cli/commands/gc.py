"""agent-tty gc [--dry-run] [--older-than DUR] [--stale-only]."""

from __future__ import annotations

from typing import Optional

import typer

from agent_tty.cli.output import GLOBALS, emit


def command(
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would be removed; remove nothing."),
    older_than: Optional[str] = typer.Option(None, "--older-than", help="Only sessions that ended longer ago (e.g. 1h)."),
    stale_only: bool = typer.Option(False, "--stale-only", help="Only sessions whose host died (failed)."),
) -> int:
    from agent_tty.lifecycle.engine import engine_for
    from agent_tty.lifecycle.gc import GcOptions, gc
    from agent_tty.protocol.values import parse_duration

    options = GcOptions(
        dry_run=dry_run,
        older_than_s=parse_duration(older_than, "--older-than") if older_than is not None else None,
        stale_only=stale_only,
    )
    report = gc(engine_for(GLOBALS.home), options)
    result = {"removedSessions": report.removed, "skippedSessions": report.skipped, "dryRun": dry_run}
    verb = "would remove" if dry_run else "removed"
    lines = [f"{verb} {len(report.removed)} session(s)" + (": " + ", ".join(report.removed) if report.removed else "")]
    lines += [f"kept {s['sessionId']}: {s['reason']}" for s in report.skipped]
    if report.sweep_errors:
        result["sweepErrors"] = report.sweep_errors
        lines += [f"warning: plugin {name}'s sweep failed: {error}" for name, error in report.sweep_errors.items()]
    emit(result, "\n".join(lines))
    return 0
