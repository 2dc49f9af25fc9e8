"""Whether this process runs inside the program's session, off Linux (ReRunsInNewSession, R14).

macOS ps shows no session id, so the lifecycle model's rule for other POSIX systems compares the
process group and the controlling terminal: a terminal is the controlling terminal of one
session and of every process in it, so it also finds a job of an interactive shell that runs in
a group of its own. Our own session id (os.getsid(0) works on macOS too) is compared as well.
Any failure reads inside: a needless re-run costs a detached copy, a missed one a destroy that
dies in its own kill.
"""

from __future__ import annotations

import os

from agent_tty_plugins.macos_ps import procs
from agent_tty_plugins.macos_ps.facts import same_terminal


def runs_inside(program_pid: int) -> bool:
    try:
        if program_pid in (os.getpgrp(), os.getsid(0)):
            return True
        try:
            if os.getpgid(program_pid) == os.getpgrp():
                return True
        except ProcessLookupError:
            return False  # the leader ended: our group and session were compared above
        ours = procs.terminal(os.getpid())
        theirs = procs.terminal(program_pid)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return same_terminal(ours, theirs)
