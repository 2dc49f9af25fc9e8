"""A test's own cgroup to start namespaces in (unshare, nsenter): enter it, then tear it down."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.conftest import wait_until


def in_cgroup(cgroup: Path, argv: list[str]) -> list[str]:
    """`argv`, run by a shell that first moves itself into `cgroup`: a cgroup namespace that
    argv unshares (or nsenter joins) then has that cgroup as its root, as a runtime's would."""
    return ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(cgroup), *argv]


def remove_cgroup_tree(top: Path) -> None:
    """End every process left in `top` and below (all of them this test's), by pid; remove
    the folders, deepest first."""
    if not top.is_dir():
        return
    folders = [Path(root) for root, _dirs, _files in os.walk(top, topdown=False)]

    def emptied() -> bool:
        for folder in folders:
            try:
                pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
            except OSError:
                continue
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        return "populated 0" in (top / "cgroup.events").read_text().splitlines()

    wait_until(emptied, timeout=15, what=f"{top} to empty")
    for folder in folders:
        wait_until(lambda f=folder: _rmdir(f), what=f"{folder} removed")  # type: ignore[misc]


def _rmdir(folder: Path) -> bool:
    try:
        folder.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True
