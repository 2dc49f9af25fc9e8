"""agent-tty version."""

from __future__ import annotations

import sys

from agent_tty import __version__
from agent_tty.cli.output import emit


def fast_path(args: list[str]) -> int | None:
    """Answered without the CLI framework: it is the command most often used to probe."""
    if args:
        return None
    emit({"version": __version__, "python": sys.version.split()[0]}, f"agent-tty {__version__}")
    return 0


def command() -> int:
    fast_path([])
    return 0
