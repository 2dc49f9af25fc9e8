"""Artifacts of a session, live or ended: a screenshot and the asciicast recording."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agent_tty.ops.names import CLI, Names
from agent_tty.ops.observe import take_snapshot

if TYPE_CHECKING:
    from agent_tty.lifecycle.engine import Engine


def screenshot(engine: Engine, session_id: str, out: str | None = None) -> dict[str, Any]:
    """A PNG of the screen, saved under the session's artifacts (and copied to `out`)."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode
    from agent_tty.storage.artifacts import ensure_artifacts, save
    from agent_tty.terminal.render import render_png

    snap, paths = take_snapshot(engine, session_id, structured=True, scrollback=False)
    try:
        png, width, height = render_png(snap)
    except (ImportError, OSError) as err:
        raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"cannot draw the screenshot: {err}") from None
    folder = ensure_artifacts(paths)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    saved = save(folder / f"screenshot-{snap['seq']}-{stamp}.png", png, session_id)
    saved["copiedTo"] = None  # one shape: the key is there without `out` too
    if out is not None:
        from agent_tty.storage.out_file import write_out

        target, _, _ = write_out(out, [png])
        saved["copiedTo"] = str(target)
    return {
        "sessionId": session_id,
        **saved,
        "width": width,
        "height": height,
        "seq": snap["seq"],
        "screenHash": snap["screenHash"],
        "source": snap["source"],
    }


def export(  # noqa: A002 - the CLI's --format
    engine: Engine, session_id: str, format: str = "asciicast", out: str | None = None, names: Names = CLI
) -> dict[str, Any]:
    """The event log as an asciinema v2 file (default: the session's artifacts/recording.cast)."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode, invalid, not_found
    from agent_tty.storage.artifacts import ensure_artifacts
    from agent_tty.storage.files import FolderGone, write_atomic_chunks
    from agent_tty.storage.segments import log_files
    from agent_tty.terminal.asciicast import CastStats, export_asciicast

    if format != "asciicast":
        raise invalid(f"invalid {names.of('format')} {format!r}: use asciicast", value=format)
    paths = engine.home.session(session_id)
    manifest = engine.read_manifest(paths)
    stats = CastStats()
    chunks = export_asciicast(log_files(paths.folder), stats, manifest.term, manifest.name)
    # Written as it is made, to a temp file renamed at the end: a bad log leaves no output.
    try:
        if out is None:
            target = ensure_artifacts(paths) / "recording.cast"
            sha256, size = write_atomic_chunks(target, chunks, 0o600)
        else:
            from agent_tty.storage.out_file import write_out

            target, sha256, size = write_out(out, chunks)
    except FolderGone:
        raise not_found(session_id) from None
    except AgentTtyError as err:
        if err.code in (ErrorCode.REPLAY_FAILED, ErrorCode.STORAGE_ERROR):
            raise AgentTtyError(ErrorCode.EXPORT_FAILED, err.message, **err.details) from None
        raise
    return {
        "sessionId": session_id,
        "format": "asciicast",
        "path": str(target),
        "sha256": sha256,
        "bytes": size,
        "events": stats.events,
        "duration": stats.duration,
    }
