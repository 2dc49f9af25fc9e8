"""agent-tty doctor / platform: what works on this machine, and why a plugin was not chosen."""

from __future__ import annotations

import os
import stat
import sys
from typing import Any

from agent_tty.cli.output import GLOBALS, emit


def _home_report(root: str) -> dict[str, Any]:
    report: dict[str, Any] = {"path": root, "exists": os.path.isdir(root)}
    if report["exists"]:
        info = os.stat(root)
        report["mode"] = oct(stat.S_IMODE(info.st_mode))
        report["ownedByMe"] = info.st_uid == os.getuid()
        report["private"] = not (info.st_mode & 0o077)
        report["writable"] = os.access(root, os.W_OK)
    return report


def _pty_report() -> dict[str, Any]:
    try:
        controller, terminal = os.openpty()
    except (OSError, AttributeError) as err:
        return {"ok": False, "reason": str(err)}
    os.close(controller)
    os.close(terminal)
    return {"ok": True}


def command() -> int:
    from agent_tty.lifecycle.engine import engine_for
    from agent_tty.protocol.errors import AgentTtyError
    from agent_tty.storage.home import socket_dir

    engine = engine_for(GLOBALS.home)
    platform = engine.platform
    probes = platform.probes()
    pinned, pinned_by = platform.pinned()
    try:
        chosen: str | None = platform.choose().name
        choice_error = None
    except AgentTtyError as err:
        chosen, choice_error = None, err.message
    plugins = []
    for probe in probes:
        entry = {"name": probe.name, "usable": probe.usable, "rank": probe.rank, "reason": probe.reason}
        if probe.name != chosen:
            entry["notChosenBecause"] = (
                probe.reason if not probe.usable else f"{chosen} ranks higher" if chosen else choice_error
            )
        plugins.append(entry)
    for name, error in platform.load_errors.items():
        plugins.append({"name": name, "usable": False, "rank": 0, "reason": f"failed to load: {error}"})
    result = {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": sys.platform,
        "pty": _pty_report(),
        "home": _home_report(str(engine.home.root)),
        "socketDir": str(socket_dir()),
        "plugins": plugins,
        "pinned": {"mechanism": pinned, "by": pinned_by} if pinned else None,
        "mechanism": chosen,
        "mechanismError": choice_error,
    }
    lines = [
        f"python     {result['python']} ({sys.executable})",
        f"pty        {'ok' if result['pty']['ok'] else 'unavailable: ' + result['pty'].get('reason', '')}",
        f"home       {engine.home.root}" + ("" if result["home"]["exists"] else " (not created yet)"),
        f"mechanism  {chosen or 'none: ' + str(choice_error)}" + (f" (pinned by {pinned_by})" if pinned else ""),
        "plugins:",
    ]
    for entry in plugins:
        mark = "ok " if entry["usable"] else "-- "
        lines.append(f"  {mark}{entry['name']} (rank {entry['rank']}): {entry['reason']}")
    emit(result, "\n".join(lines))
    return 0 if chosen else 1
