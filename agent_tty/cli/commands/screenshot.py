"""agent-tty screenshot ID [--out PATH]: a PNG of the screen, saved under the session's artifacts."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from agent_tty.cli.output import emit


def command(
    session_id: str = typer.Argument(..., metavar="ID"),
    out: Optional[str] = typer.Option(None, "--out", help="Also copy the PNG to this path."),
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops.observe import take_snapshot
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode
    from agent_tty.storage.artifacts import ensure_artifacts, save
    from agent_tty.terminal.render import render_png

    snap, paths = take_snapshot(cli_engine(), session_id, structured=True, scrollback=False)
    try:
        png, width, height = render_png(snap)
    except (ImportError, OSError) as err:
        raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"cannot draw the screenshot: {err}") from None
    folder = ensure_artifacts(paths)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    saved = save(folder / f"screenshot-{snap['seq']}-{stamp}.png", png, session_id)
    saved["copiedTo"] = None  # one shape: the key is there without --out too
    if out is not None:
        target = Path(out).resolve()
        try:
            target.write_bytes(png)
        except OSError as err:
            raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"cannot write {target}: {err.strerror}", path=str(target)) from None
        saved["copiedTo"] = str(target)
    result = {
        "sessionId": session_id,
        **saved,
        "width": width,
        "height": height,
        "seq": snap["seq"],
        "screenHash": snap["screenHash"],
        "source": snap["source"],
    }
    emit(result, str(saved["copiedTo"] or saved["path"]))
    return 0
