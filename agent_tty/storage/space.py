"""How much room the Home's file system has left (inspect, doctor): a full disk explains a
session whose event log is incomplete and a manifest write that failed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

NEARLY_FULL_SHARE = 0.05
NEARLY_FULL_BYTES = 1 << 30
"""Nearly full: less free than 5 % of the file system and less than 1 GiB."""


@dataclass(frozen=True)
class Space:
    free_bytes: int
    """What an unprivileged writer may still use (f_bavail)."""
    total_bytes: int

    @property
    def nearly_full(self) -> bool:
        return self.free_bytes < min(self.total_bytes * NEARLY_FULL_SHARE, NEARLY_FULL_BYTES)


def home_space(root: Path) -> Space | None:
    """None when the Home cannot be measured (it does not exist yet, say)."""
    import shutil

    try:
        usage = shutil.disk_usage(root)  # POSIX: statvfs's f_bavail and f_blocks; Windows too
    except OSError:
        return None
    return Space(free_bytes=usage.free, total_bytes=usage.total)


def describe(space: Space) -> str:
    return f"{space.free_bytes / (1 << 20):.1f} MiB free of {space.total_bytes / (1 << 20):.1f} MiB"
