"""agent-tty doctor / platform: what works on this machine, and why a plugin was not chosen."""

from __future__ import annotations

import sys
from typing import Any

from agent_tty.cli.output import GLOBALS, emit


def _screen_line(screen: dict[str, Any]) -> str:
    line = f"screen     {screen['backend']}" + (f" (forced by {screen['forcedBy']})" if screen["forcedBy"] else "")
    if screen["error"]:
        line += f"\n           {screen['error']}"
    if screen["note"]:
        line += f"\n           {screen['note']}"
    return line


def _fonts_line(fonts: dict[str, dict[str, Any]]) -> str:
    """Screenshot fonts: the primary one, then each fallback by its role."""
    primary = fonts["primary"]
    line = f"fonts      {primary['font'] if primary['installed'] else 'MISSING ' + str(primary['package'])}"
    roles = [f"{role} {'ok' if info['installed'] else 'not installed'}" for role, info in fonts.items() if role != "primary"]
    return line + "; fallbacks: " + ", ".join(roles)


def _video_line(video: dict[str, Any]) -> str:
    """Video export: gif always; webm and mp4 with PyAV, else what installs it."""
    if video["pyav"]:
        return f"video      gif, webm, mp4 (PyAV {video['pyav']})"
    return f"video      gif; webm and mp4 need PyAV: {video['install']}"


def command() -> int:
    from agent_tty.ops.doctor import doctor, healthy

    result = doctor(GLOBALS.home)
    chosen, pinned, disk = result["mechanism"], result["pinned"], result["disk"]
    lines = [
        f"python     {result['python']} ({sys.executable})",
        f"pty        {'ok' if result['pty']['ok'] else 'unavailable: ' + result['pty'].get('reason', '')}",
        f"home       {result['home']['path']}" + ("" if result["home"]["exists"] else " (not created yet)"),
        *([] if result["home"]["trusted"] else [f"           UNSAFE: {result['home']['refusal']}"]),
        f"sockets    {result['socketDir']}",
        f"transport  {result['transport']}",
        _screen_line(result["screen"]),
        _fonts_line(result["fonts"]),
        _video_line(result["video"]),
        f"mechanism  {chosen or 'none: ' + str(result['mechanismError'])}" + (f" (pinned by {pinned['by']})" if pinned else ""),
        *([f"disk       {disk['freeBytes'] / (1 << 20):.1f} MiB free of {disk['totalBytes'] / (1 << 20):.1f} MiB"] if disk else []),
        *[f"WARNING    {warning}" for warning in result['warnings']],
        "plugins:",
    ]
    for entry in result["plugins"]:
        mark = "ok " if entry["usable"] else "-- "
        lines.append(f"  {mark}{entry['name']} (rank {entry['rank']}): {entry['reason']}")
        if entry.get("notChosenBecause") and entry["usable"]:
            lines.append(f"       not chosen: {entry['notChosenBecause']}")
    emit(result, "\n".join(lines))
    return 0 if healthy(result) else 1
