"""Artifacts of a session, live or ended: a screenshot, the asciicast recording and its video."""

from __future__ import annotations

import math
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


FORMATS = ("asciicast", "webm", "mp4", "gif")
SUFFIX = {"asciicast": "cast", "webm": "webm", "mp4": "mp4", "gif": "gif"}


def check_video_options(
    format: str, speed: float | None, max_idle: float | None, fps: int | None, names: Names = CLI  # noqa: A002
) -> None:
    """INVALID_INPUT for a format we do not write or a video option out of its range (or given
    for asciicast), before the Home is looked at."""
    from agent_tty.protocol.errors import invalid
    from agent_tty.terminal import video

    if format not in FORMATS:
        raise invalid(f"invalid {names.of('format')} {format!r}: use {', '.join(FORMATS)}", value=format)
    if format == "asciicast":
        given = [n for n, v in (("speed", speed), ("max_idle", max_idle), ("fps", fps)) if v is not None]
        if given:
            raise invalid(f"{names.one_of(*given)} apply to webm, mp4 and gif, not asciicast (its player times it)")
        return
    if speed is not None and not (math.isfinite(speed) and 0.01 <= speed <= 1000):
        raise invalid(f"invalid {names.of('speed')} {speed!r}: a number from 0.01 to 1000 (2: twice as fast)", value=str(speed))
    if max_idle is not None and not (math.isfinite(max_idle) and 0 <= max_idle <= 86400):
        raise invalid(f"invalid {names.of('max_idle')} {max_idle!r}: seconds from 0 (no cap) to 86400", value=str(max_idle))
    if fps is not None and not (isinstance(fps, int) and 1 <= fps <= video.FPS_MAX):
        raise invalid(f"invalid {names.of('fps')} {fps!r}: frames a second from 1 to {video.FPS_MAX}", value=fps)


def export(  # noqa: A002 - the CLI's --format
    engine: Engine,
    session_id: str,
    format: str = "asciicast",
    out: str | None = None,
    names: Names = CLI,
    *,
    speed: float | None = None,
    max_idle: float | None = None,
    fps: int | None = None,
) -> dict[str, Any]:
    """The event log as an asciinema v2 file or a video (webm, mp4, gif) drawn by the screenshot
    renderer (default: the session's artifacts/recording.<cast|webm|mp4|gif>)."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode, not_found
    from agent_tty.storage.artifacts import ensure_artifacts
    from agent_tty.storage.files import FolderGone, write_atomic_chunks
    from agent_tty.storage.segments import log_files

    check_video_options(format, speed, max_idle, fps, names)
    video_stats = None
    if format in ("webm", "mp4"):
        from agent_tty.terminal.video import load_av

        load_av()  # MISSING_DEPENDENCY before the Home is looked at
    paths = engine.home.session(session_id)
    manifest = engine.read_manifest(paths)
    if format == "asciicast":
        from agent_tty.terminal.asciicast import CastStats, export_asciicast

        stats = CastStats()
        chunks = export_asciicast(log_files(paths.folder), stats, manifest.term, manifest.name)
    else:
        from agent_tty.terminal import video

        video_stats = video.VideoStats()
        chunks = video.encode(
            log_files(paths.folder),
            format,
            video_stats,
            fps=video.FPS if fps is None else fps,
            speed=1.0 if speed is None else speed,
            max_idle=video.MAX_IDLE if max_idle is None else max_idle,
        )
    # Written as it is made, to a temp file renamed at the end: a bad log leaves no output.
    try:
        if out is None:
            target = ensure_artifacts(paths) / f"recording.{SUFFIX[format]}"
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
    except (ImportError, OSError, ValueError) as err:  # a font, or PyAV's encoder, refused
        raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"cannot make the {format} video: {type(err).__name__}: {err}") from None
    if video_stats is not None:
        return {
            "sessionId": session_id,
            "format": format,
            "path": str(target),
            "sha256": sha256,
            "bytes": size,
            "events": video_stats.events,
            "duration": round(video_stats.duration, 3),
            "frames": video_stats.frames,
            "width": video_stats.width,
            "height": video_stats.height,
            "fps": video.FPS if fps is None else fps,
            "speed": 1.0 if speed is None else speed,
            "maxIdle": video.MAX_IDLE if max_idle is None else max_idle,
            "lastSeq": video_stats.last_seq,
        }
    return {
        "sessionId": session_id,
        "format": "asciicast",
        "path": str(target),
        "sha256": sha256,
        "bytes": size,
        "events": stats.events,
        "duration": stats.duration,
    }
