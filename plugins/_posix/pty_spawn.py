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
    """A program in a PTY: non-blocking reads and writes, resize, reaping with waitpid.

    It is spawned held at its start (StartGate): placed in its session, group and any leaf, but
    not yet running its own code, until `release()` lets it exec.
    """

    def __init__(self, pid: int, fd: int, gate: int | None = None, status: int | None = None) -> None:
        self.pid = pid
        self.fd = fd
        self._gate = gate
        self._status = status
        self._exit: ProgramExit | None = None
        os.set_blocking(fd, False)

    def release(self) -> None:
        """Let the held program exec, once a record names it; raises OSError when its exec
        failed (the child has then exited). Without this call, the program never starts: the
        gate's end closes with the host, and the child exits at that end of file."""
        if self._gate is None or self._status is None:
            return
        gate, status = self._gate, self._status
        self._gate = self._status = None
        try:
            os.write(gate, _GO)
        finally:
            os.close(gate)
        try:
            report = _read_all(status)  # end of file: the exec closed the child's end
        finally:
            os.close(status)
        if report:
            raise _error_from(report)

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
        for fd in (self.fd, self._gate, self._status):
            if fd is None:
                continue
            try:
                os.close(fd)
            except OSError:
                pass
        self._gate = self._status = None


_GO = b"G"
_READY = b"R"


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 4096):
        chunks.append(chunk)
    return b"".join(chunks)


def _error_from(report: bytes) -> OSError:
    """The child's "<errno>:<message>" as the OSError it stood for."""
    number, _, message = report.decode("utf-8", "replace").partition(":")
    code = int(number) if number.isdigit() and int(number) else None
    return OSError(code, message) if code else OSError(message)


def _resolve(command: str, env: dict[str, str] | None) -> str:
    """argv[0] as exec will run it: a path as given, else the first executable on the
    program's PATH. Resolved before the fork, so "not found" is spawn's error."""
    import shutil

    path = (env if env is not None else os.environ).get("PATH", os.defpath)
    found = shutil.which(command, path=path) if os.sep not in command else (command if os.access(command, os.X_OK) else None)
    if found is None or os.path.isdir(found):
        raise FileNotFoundError(errno.ENOENT, "not found or not executable")
    return found


def _login_tty(fd: int) -> None:
    """setsid, the PTY as controlling terminal, and fds 0-2 on it (os.login_tty where the C
    library has it)."""
    login_tty = getattr(os, "login_tty", None)
    if login_tty is not None:
        login_tty(fd)
        return
    os.setsid()
    fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
    for target in (0, 1, 2):
        os.dup2(fd, target)
    if fd > 2:
        os.close(fd)


def spawn_in_pty(
    request: SpawnRequest,
    before_exec: Callable[[], None] | None = None,
    held: bool = False,
    fork: Callable[[], int] | None = None,
) -> PosixPty:
    """fork + setsid + exec in a new PTY; with `held`, the program waits before its exec until
    the handle's release() (StartGate: the host releases it once program.json names it).

    `before_exec` runs in the child after setsid and before the exec (or the hold), for
    placement into a group; so a held child sits in its final session, group and leaf (what
    capture_program reads) and has run none of the program's code. `fork` stands for os.fork
    (the child's pid, 0 in the child, OSError when none started): linux_cgroup's starts the
    child in its leaf. The child makes only system calls through os, fcntl, signal and
    resource before its exec (and whatever before_exec does). Errors before the exec come
    back as OSError from here; a held program's exec error comes back from release(). Without
    `held` (the default, for a plugin that wraps the handle in its own) the program runs before
    spawn returns, and an exec error raises here.
    """
    import pty
    import resource

    argv = list(request.argv)
    command = _resolve(argv[0], request.env)
    master, slave = pty.openpty()
    gate_read, gate_write = os.pipe()
    status_read, status_write = os.pipe()
    try:
        pid = (fork or os.fork)()
    except OSError:
        for fd in (master, slave, gate_read, gate_write, status_read, status_write):
            os.close(fd)
        raise
    if pid == 0:  # the child: it never returns into the host's code
        try:
            os.close(master)
            os.close(gate_write)
            os.close(status_read)
            _login_tty(slave)
            fcntl.fcntl(status_write, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
            fcntl.fcntl(gate_read, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
            limit = min(1 << 20, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
            keep = sorted((gate_read, status_write))
            for low, high in zip([2, *keep], [*keep, limit]):
                os.closerange(low + 1, high)
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", request.rows, request.cols, 0, 0))
            # chdir and umask here: the program's, not the host's.
            if request.cwd is not None:
                os.chdir(request.cwd)
            if request.umask is not None:
                os.umask(request.umask)
            _restore_signals()
            if before_exec is not None:
                before_exec()
            os.write(status_write, _READY)
            if os.read(gate_read, 1) != _GO:
                os._exit(0)  # the host ended before a record named us: the program never runs
            os.close(gate_read)
            if request.env is None:
                os.execv(command, argv)
            os.execve(command, argv, request.env)
        except BaseException as err:  # noqa: BLE001 - every failure goes back to the host
            number = getattr(err, "errno", None) or 0
            text = getattr(err, "strerror", None) or str(err) or type(err).__name__
            try:
                os.write(status_write, f"{number}:{text}".encode("utf-8", "replace"))
            finally:
                os._exit(127)
    os.close(slave)
    os.close(gate_read)
    os.close(status_write)
    try:
        ready = os.read(status_read, 4096)
    except BaseException:
        os.close(status_read)
        os.close(gate_write)
        os.close(master)
        raise
    if ready != _READY:
        os.close(status_read)
        os.close(gate_write)
        os.close(master)
        os.waitpid(pid, 0)  # our own child, ended before its hold: reap it
        raise _error_from(ready) if ready else OSError(errno.ECHILD, "the program ended before it could start")
    for fd in (master, gate_write, status_read):
        os.set_inheritable(fd, False)
    program = PosixPty(pid, master, gate=gate_write, status=status_read)
    if not held:
        try:
            program.release()
        except OSError:
            program.close()
            os.waitpid(pid, 0)  # our own child, ended at its failed exec: reap it
            raise
    return program
