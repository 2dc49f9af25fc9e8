"""doctor: what works on this machine, and why a plugin was not chosen (the data; the CLI prints it)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from agent_tty.platform.system import current
from agent_tty.terminal.glyphs import font_report
from agent_tty.terminal.video import video_report
from agent_tty.terminal.screen import backend_report


def _home_report(root: str) -> dict[str, Any]:
    """The Home's facts and the trust verdict every other command applies to it."""
    from agent_tty.protocol.errors import AgentTtyError
    from agent_tty.storage.trust import check_home

    report: dict[str, Any] = {"path": root, "exists": os.path.isdir(root)}
    if report["exists"]:
        try:
            access = current().access(root, os.stat(root))
            report["mode"], report["owner"], report["private"] = access.shown, access.owner, not access.others_read
            report["ownedByMe"] = access.owner == current().user()
        except (AgentTtyError, OSError):
            report["ownedByMe"] = None  # this system cannot tell (doctor says why below)
        report["writable"] = os.access(root, os.W_OK)
    try:
        check_home(Path(root))
        report["trusted"] = True
    except AgentTtyError as err:
        report["trusted"] = False
        report["problem"] = err.details.get("problem", err.code.value)
        report["refusal"] = err.message
    return report


def _disk_warnings(home: Any, trusted: bool) -> tuple[dict[str, Any] | None, list[str]]:
    """The Home's free space, and warnings for a nearly full disk and for sessions whose event
    log lost events (their manifest says `logIncomplete`)."""
    from agent_tty.protocol.errors import AgentTtyError
    from agent_tty.storage.files import read_record
    from agent_tty.storage.records import Manifest
    from agent_tty.storage.space import describe, home_space

    warnings = []
    space = home_space(home.root)
    disk = None
    if space is not None:
        disk = {"freeBytes": space.free_bytes, "totalBytes": space.total_bytes, "nearlyFull": space.nearly_full}
        if space.nearly_full:
            warnings.append(
                f"the Home's file system is nearly full ({describe(space)}): hosts drop output from event logs"
                " and manifest writes (destroy) fail until there is space"
            )
    if trusted:
        try:
            ids = home.session_ids()
        except (OSError, AgentTtyError):
            ids = []
        for session_id in ids:
            try:
                manifest = read_record(home.session(session_id).manifest, Manifest)
            except (OSError, AgentTtyError):
                continue
            lost = manifest.log_incomplete
            if lost is not None:
                warnings.append(
                    f"session {session_id}: event log incomplete: {lost.events_lost} events"
                    f" ({lost.bytes_lost} bytes) lost since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(lost.since))}"
                )
    return disk, warnings


def _socket_dir(root: Path) -> str:
    from agent_tty.protocol.errors import AgentTtyError
    from agent_tty.storage.home import preview_socket_dir

    try:
        return preview_socket_dir(root)
    except AgentTtyError as err:
        return f"none: {err.message}"


def doctor(home_arg: str | None = None) -> dict[str, Any]:
    """The report `doctor --json` prints; `healthy` says whether sessions can work here."""
    from agent_tty.lifecycle.engine import Engine
    from agent_tty.platform.manager import Platform
    from agent_tty.protocol.errors import AgentTtyError
    from agent_tty.storage.home import Home, resolve_home
    from agent_tty.storage.trust import real_home

    # Not engine_for: doctor reports an unsafe Home instead of refusing it.
    home = Home(real_home(str(resolve_home(home_arg))))
    home_report = _home_report(str(home.root))
    # An unsafe Home's config.json is not ours to obey: probe as if it had none.
    platform = Engine(home).platform if home_report["trusted"] else Platform(None)
    probes = platform.probes()
    pinned, pinned_by = platform.pinned()
    try:
        chosen: str | None = platform.choose().name
        choice_error = None
    except AgentTtyError as err:
        chosen, choice_error = None, err.message
    disk, warnings = _disk_warnings(home, home_report["trusted"] and home_report["exists"])
    plugins = []
    for probe in probes:
        entry = {"name": probe.name, "usable": probe.usable, "rank": probe.rank, "reason": probe.reason}
        if probe.name != chosen:
            if not probe.usable:
                because = probe.reason
            elif pinned and chosen:
                because = f"{chosen} is pinned by {pinned_by}"
            else:
                because = f"{chosen} ranks higher" if chosen else choice_error
            entry["notChosenBecause"] = because
        plugins.append(entry)
    for name, error in platform.load_errors.items():
        reason = f"failed to load: {error}"
        plugins.append({"name": name, "usable": False, "rank": 0, "reason": reason, "notChosenBecause": reason})
    result = {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": sys.platform,
        "pty": current().terminal_check(),
        "home": home_report,
        "socketDir": _socket_dir(home.root),
        "transport": _transport(),
        "plugins": plugins,
        "pinned": {"mechanism": pinned, "by": pinned_by} if pinned else None,
        "mechanism": chosen,
        "mechanismError": choice_error,
        "screen": backend_report(),
        "fonts": font_report(),
        "video": video_report(),
        "disk": disk,
        "warnings": warnings,
    }
    return result


def _transport() -> str:
    from agent_tty.protocol.errors import AgentTtyError

    try:
        return current().transport()
    except AgentTtyError as err:
        return f"none: {err.message}"


def healthy(report: dict[str, Any]) -> bool:
    """Sessions work here: a mechanism, a trusted Home, a transport, a screen engine and the primary font."""
    return bool(
        report["mechanism"]
        and report["home"]["trusted"]
        and not report["transport"].startswith("none:")
        and not report["screen"]["error"]
        and report["fonts"]["primary"]["installed"]
    )
