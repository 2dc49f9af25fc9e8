"""Signals to a process group, guarded so that no id can widen a kill."""

from __future__ import annotations

import enum
import os


class Probe(enum.Enum):
    FOUND = "found"
    NONE = "none"
    DENIED = "denied"


def _checked(pgid: int) -> int:
    # Group id 0 means our own group, and -1 every process we may signal: never.
    if type(pgid) is not int or pgid <= 1:
        raise ValueError(f"refusing to signal process group {pgid!r}")
    return pgid


def signal_group(pgid: int, signal: int) -> Probe:
    """Send `signal` to the group. Callers reach this only right after a proof."""
    try:
        os.killpg(_checked(pgid), signal)
    except ProcessLookupError:
        return Probe.NONE
    except PermissionError:
        return Probe.DENIED
    return Probe.FOUND


def probe_group(pgid: int) -> Probe:
    """Signal 0: does any process have this group id (zombies included)?"""
    return signal_group(pgid, 0)
