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
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode, invalid
    from agent_tty.storage.artifacts import ensure_artifacts, save
    from agent_tty.terminal.asciicast import export_asciicast

    if action != "export":
        raise invalid(f"unknown record action {action!r}: use `record export`", value=action)
    if format_ != "asciicast":
        raise invalid(f"invalid --format {format_!r}: use asciicast", value=format_)
    engine = engine_for(GLOBALS.home)
    paths = engine.home.session(session_id)
    manifest = engine.read_manifest(paths)
    try:
        data, count, duration = export_asciicast(paths.events, manifest.term, manifest.name)
    except AgentTtyError as err:
        if err.code is ErrorCode.REPLAY_FAILED:
            raise AgentTtyError(ErrorCode.EXPORT_FAILED, err.message, **err.details) from None
        raise
    if out is None:
        saved = save(ensure_artifacts(paths) / "recording.cast", data, session_id)
    else:
        target = Path(out).resolve()
        try:
            target.write_bytes(data)
        except OSError as err:
            raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"cannot write {target}: {err.strerror}", path=str(target)) from None
        import hashlib

        saved = {"path": str(target), "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    emit({"sessionId": session_id, "format": "asciicast", **saved, "events": count, "duration": duration}, str(saved["path"]))
    return 0
