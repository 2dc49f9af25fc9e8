"""How much room the Home's file system has left (inspect, doctor): a full disk explains a
session whose event log is incomplete and a manifest write that failed."""

from __future__ import annotations

import os

from agent_tty.frozen import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

NEARLY_FULL_SHARE = 0.05
NEARLY_FULL_BYTES = 1 << 30
"""Nearly full: less free than 5 % of the file system and less than 1 GiB."""


class Space(Frozen):
    __slots__ = ("free_bytes", "total_bytes")
    free_bytes: int
    """What an unprivileged writer may still use (f_bavail)."""
    total_bytes: int

    @property
    def nearly_full(self) -> bool:
        return self.free_bytes < min(self.total_bytes * NEARLY_FULL_SHARE, NEARLY_FULL_BYTES)


def home_space(root: Path) -> Space | None:
    """None when the Home cannot be measured (it does not exist yet, say)."""
    try:
        if hasattr(os, "statvfs"):  # what shutil.disk_usage reads, without shutil's bz2/lzma imports (inspect)
            info = os.statvfs(root)
            return Space(free_bytes=info.f_bavail * info.f_frsize, total_bytes=info.f_blocks * info.f_frsize)
        import shutil

        usage = shutil.disk_usage(root)  # Windows: GetDiskFreeSpaceExW
    except OSError:
        return None
    return Space(free_bytes=usage.free, total_bytes=usage.total)


def describe(space: Space) -> str:
    return f"{space.free_bytes / (1 << 20):.1f} MiB free of {space.total_bytes / (1 << 20):.1f} MiB"
