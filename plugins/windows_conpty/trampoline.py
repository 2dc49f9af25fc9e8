"""What pywinpty starts in the ConPTY: it joins the session's job, then starts the program in it.

pywinpty creates its process itself and cannot create it suspended, so it starts this instead:
it opens the job by its name, puts itself in it (AssignProcessToJobObject), and only then starts
the program, which inherits the job before it runs any code of its own, and the console. It
ignores ^C (the program's to handle), waits, and exits with the program's code.

    python -m agent_tty_plugins.windows_conpty.trampoline JOB_NAME -- ARGV...
"""

from __future__ import annotations

import signal
import subprocess
import sys

JOIN_FAILED = 126
START_FAILED = 127


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: trampoline JOB_NAME -- ARGV...", file=sys.stderr)
        return JOIN_FAILED
    from agent_tty_plugins.windows_conpty.win32 import join_job

    try:
        join_job(argv[0])
    except OSError as err:
        print(f"agent-tty: cannot join the session's job: {err}", file=sys.stderr)
        return JOIN_FAILED
    # The CRT's disposition is this process's own: the program gets the console's default.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGBREAK, signal.SIG_IGN)  # type: ignore[attr-defined]
    try:
        program = subprocess.Popen(argv[2:])
    except OSError as err:
        print(f"agent-tty: cannot start {argv[2]}: {err}", file=sys.stderr)
        return START_FAILED
    return program.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
