"""Start a program in a new PTY, as the leader of a new session and process group."""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import struct
import termios
from collections.abc import Callable

from agent_tty.platform.types import ProgramExit, SpawnRequest

# The signals a terminal sends its foreground process group from the keyboard (^C, ^\, ^Z).
TERMINAL_SIGNALS = frozenset({signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP})


def _tiocsig() -> int | None:
    """Linux's TIOCSIG, _IOW('T', 0x36, int): the PTY master asks the kernel to signal the
    slave's foreground process group. Python's termios does not export it."""
    import platform
    import sys

    if not sys.platform.startswith("linux"):
        return None
    write_bit = 0x80000000 if platform.machine().startswith(("ppc", "mips", "sparc", "alpha")) else 0x40000000
    return write_bit | (4 << 16) | (ord("T") << 8) | 0x36


def _restore_signals() -> None:
    """Default dispositions and an empty mask for the program.

    exec resets handled signals but keeps ignored ones: Python ignores SIGPIPE and the host
    ignores SIGHUP and SIGINT, and the program must not inherit that.
    """
    for number in signal.valid_signals():
        if number in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


class PosixPty:
    """A program in a PTY: non-blocking reads and writes, resize, reaping with waitpid."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        self._exit: ProgramExit | None = None
        os.set_blocking(fd, False)

    def read(self, limit: int) -> bytes | None:
        try:
            data = os.read(self.fd, limit)
        except BlockingIOError:
            return b""
        except OSError as err:
            if err.errno == errno.EIO:  # Linux: every slave fd closed
                return None
            raise
        return data if data else None  # BSD: an empty read at EOF

    def write(self, data: bytes) -> int:
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0

    def resize(self, cols: int, rows: int) -> None:
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def signal_foreground(self, number: int) -> int | None:
        """A keyboard signal, delivered as the terminal delivers it: by the kernel, to the
        terminal's foreground process group. Returns that group's id, or None when this is not
        such a signal or it cannot be delivered so (the caller then uses the proof path).

        No kill() here: TIOCSIG reaches only the foreground group of this PTY, which tcsetpgrp
        lets only groups of the terminal's session become. That session must still be the
        program's: the program, not yet reaped (so its pid is not reused), leads it.
        """
        request = _tiocsig()
        if number not in TERMINAL_SIGNALS or request is None or self._exit is not None:
            return None
        try:
            foreground = os.tcgetpgrp(self.fd)
            if os.getsid(foreground) != self.pid:
                return None
            fcntl.ioctl(self.fd, request, number)
        except OSError:
            return None
        return foreground

    def poll_exit(self) -> ProgramExit | None:
        if self._exit is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return None
            if pid == 0:
                return None
            if os.WIFSIGNALED(status):
                self._exit = ProgramExit(exit_code=None, exit_signal=os.WTERMSIG(status))
            else:
                self._exit = ProgramExit(exit_code=os.waitstatus_to_exitcode(status), exit_signal=None)
        return self._exit

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


def spawn_in_pty(request: SpawnRequest, before_exec: Callable[[], None] | None = None) -> PosixPty:
    """fork + setsid + exec in a PTY (ptyprocess); exec errors come back as OSError.

    `before_exec` runs in the child after setsid and before exec, for placement into a group.
    """
    from ptyprocess import PtyProcess

    def preexec() -> None:
        # chdir here, not through ptyprocess's cwd=: its own chdir failure would unwind the
        # forked child into the host's code, whereas preexec errors come back as OSError.
        if request.cwd is not None:
            os.chdir(request.cwd)
        if request.umask is not None:
            os.umask(request.umask)
        _restore_signals()
        if before_exec is not None:
            before_exec()

    process = PtyProcess.spawn(
        list(request.argv),
        cwd=None,
        env=request.env,
        dimensions=(request.rows, request.cols),
        preexec_fn=preexec,
    )
    # ptyprocess's close() and __del__ signal by pid. The host reaps the program itself and
    # every signal must go through the proof-then-kill path, so the object must never do so.
    process.closed = True
    fd = os.dup(process.fd)
    os.set_inheritable(fd, False)
    process.fileobj.close()
    return PosixPty(process.pid, fd)
