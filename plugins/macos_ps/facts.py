"""Pure rules on the facts macos_ps reads: terminals, start times, the host's command line.

No system calls here, so the macOS formats are unit-tested on any OS
(tests/platforms/macos_ps/test_facts.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

NO_TERMINAL = frozenset({"", "?", "??", "-", "console"})
"""What "no controlling terminal" looks like: psutil gives None; macOS ps prints '??', Linux ps
'?'; some tools print '-'. 'console' is the machine's console, shared by every process that runs
on it, so it tells no session apart."""

HOST_MODULE = "agent_tty.host"
"""The host runs as `python -m agent_tty.host SESSION_ID CREATE_PID HOME` (lifecycle/create.py)."""


def real_terminal(name: str | None) -> str | None:
    """The terminal's name without '/dev/', or None when the value names no terminal."""
    if name is None:
        return None
    name = name.strip()
    name = name.removeprefix("/dev/")
    return None if name in NO_TERMINAL else name


def same_terminal(ours: str | None, theirs: str | None) -> bool:
    """Two processes share a controlling terminal only when both have a real one: two processes
    without a terminal have nothing in common (ReRunsInNewSession compares terminals)."""
    a, b = real_terminal(ours), real_terminal(theirs)
    return a is not None and a == b


def host_session(argv: Sequence[str]) -> str | None:
    """The session id an agent-tty host's command line names, else None.

    Only the tail is read: on macOS a framework Python re-execs itself with another argv[0]
    (.../Python.app/Contents/MacOS/Python), and the interpreter's path is the user's choice."""
    args = list(argv)
    for i, arg in enumerate(args[:-1]):
        if arg == HOST_MODULE and i > 0 and args[i - 1] == "-m":
            return args[i + 1] or None
    return None


START_TOLERANCE_S = 1e-6
"""Start times travel through JSON as floats: equal up to rounding, never across two forks."""


def start_of(record: dict[str, Any] | None, clock: str) -> float | None:
    """The recorded start time when it was read on `clock`, else None (it cannot be compared:
    a record of another psutil or another plugin proves nothing)."""
    return _moment(record, clock, "startTime")


def _moment(record: dict[str, Any] | None, clock: str, key: str) -> float | None:
    if not record or record.get("clock") != clock:
        return None
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def same_start(a: float, b: float) -> bool:
    return abs(a - b) <= START_TOLERANCE_S


def reaped_at(record: dict[str, Any] | None, clock: str) -> float | None:
    """The moment the host reaped the leader (program.json's `reaped`) when it was read on
    `clock`, else None: no moment, no proof that a member is older than the reap."""
    return _moment(record, clock, "reapedAt")


def other_boot(record: dict[str, Any] | None, boot: str | None) -> bool:
    """The reap was recorded in another boot than this one: nothing of the program survived it.
    Only when both ids were read (macOS records none: its start times are wall-clock times)."""
    recorded = record.get("bootId") if record else None
    return isinstance(recorded, str) and boot is not None and recorded != boot


def started_by(start: float | None, moment: float) -> bool:
    """A start time no later than `moment` (the same Linux tick counts: a start time is
    truncated to it, so a process forked before the moment never reads after it)."""
    return start is not None and start <= moment + START_TOLERANCE_S
