"""agent-tty record export ID --format asciicast [--out PATH]."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from agent_tty.cli.output import GLOBALS, emit


def command(
    action: str = typer.Argument(..., metavar="export", help="The only action: export."),
    session_id: str = typer.Argument(..., metavar="ID"),
    format_: str = typer.Option("asciicast", "--format", help="asciicast (asciinema v2)."),
    out: Optional[str] = typer.Option(None, "--out", help="Where to write it (default: the session's artifacts)."),
) -> int:
    from agent_tty.lifecycle.engine import engine_for
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode, invalid, not_found
    from agent_tty.storage.artifacts import ensure_artifacts
    from agent_tty.storage.files import FolderGone, write_atomic_chunks
    from agent_tty.storage.segments import log_files
    from agent_tty.terminal.asciicast import CastStats, export_asciicast

    if action != "export":
        raise invalid(f"unknown record action {action!r}: use `record export`", value=action)
    if format_ != "asciicast":
        raise invalid(f"invalid --format {format_!r}: use asciicast", value=format_)
    engine = engine_for(GLOBALS.home)
    paths = engine.home.session(session_id)
    manifest = engine.read_manifest(paths)
    stats = CastStats()
    chunks = export_asciicast(log_files(paths.folder), stats, manifest.term, manifest.name)
    # Written as it is made, to a temp file renamed at the end: a bad log leaves no output.
    target = ensure_artifacts(paths) / "recording.cast" if out is None else Path(out).resolve()
    try:
        sha256, size = write_atomic_chunks(target, chunks, 0o600 if out is None else 0o666)
    except FolderGone:
        if out is None:
            raise not_found(session_id) from None
        raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"cannot write {target}: no such folder", path=str(target)) from None
    except AgentTtyError as err:
        if err.code in (ErrorCode.REPLAY_FAILED, ErrorCode.STORAGE_ERROR):
            raise AgentTtyError(ErrorCode.EXPORT_FAILED, err.message, **err.details) from None
        raise
    saved = {"path": str(target), "sha256": sha256, "bytes": size}
    count, duration = stats.events, stats.duration
    emit({"sessionId": session_id, "format": "asciicast", **saved, "events": count, "duration": duration}, str(saved["path"]))
    return 0
