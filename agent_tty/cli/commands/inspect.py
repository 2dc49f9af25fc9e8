"""agent-tty inspect ID: the whole manifest plus derived facts."""

from __future__ import annotations

import json
import time

import typer

from agent_tty.cli.output import GLOBALS, emit


def command(session_id: str = typer.Argument(..., metavar="ID", help="The session id.")) -> int:
    from agent_tty.lifecycle.engine import engine_for
    from agent_tty.lifecycle.reconcile import reconcile
    from agent_tty.storage.files import exists
    from agent_tty.storage.space import home_space

    engine = engine_for(GLOBALS.home)
    paths = engine.home.session(session_id)
    reconciled = reconcile(engine, paths, engine.read_manifest(paths))
    manifest = reconciled.manifest
    result = manifest.to_obj()
    result["derived"] = {
        "folder": str(paths.folder),
        "socketPath": manifest.socket_path,
        "mechanism": manifest.mechanism,
        "ageSeconds": round(time.time() - manifest.created_at, 3),
        "host": reconciled.host,
        "destroyedMarker": exists(paths.destroyed_marker),
        "createFailedMarker": exists(paths.create_failed_marker),
    }
    # A full disk: the host keeps the session running but cannot record all of it.
    space = home_space(engine.home.root)
    if space is not None:
        result["derived"]["homeFreeBytes"] = space.free_bytes
        result["derived"]["homeNearlyFull"] = space.nearly_full
    emit(result, json.dumps(result, indent=2, allow_nan=False))
    return 0
