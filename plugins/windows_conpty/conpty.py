"""The program in a ConPTY as the host drives it (types.ProgramHandle), with an fd to select on.

The host's loop waits with `selectors` on fds, and on Windows select() takes sockets only, while
a ConPTY's output is a pipe that pywinpty reads blocking. So one thread per program reads the
pipe and writes what it got into a socketpair; the host selects on the other end, which reads as
the PTY would (output, b"" when none is ready, None once the output ended). The thread never
signals and never touches the program: it ends when the pipe does, or when close() shuts the pair.

A ConPTY's pipe does not end when its program does: the console stays until it is closed, and
the host (which has no SIGCHLD here) learns of the exit from the end of the output. So a second
thread watches the program and, once it has ended and the console has passed on nothing more
for EXIT_DRAIN_S, ends the output itself.
"""

from __future__ import annotations

import socket
import threading
import time

from agent_tty.platform.types import ProgramExit
from agent_tty_plugins.windows_conpty.layer import Pty

READ_CHUNK = 65536
CTRL_C = b"\x03"
INTERRUPT = 2
EXIT_POLL_S = 0.1
"""How often the watcher looks whether the program ended (one look is one handle query)."""
EXIT_DRAIN_S = 0.3
"""After the program ended, the output ends once the console passed on nothing for this long."""
EXIT_DRAIN_MAX_S = 3.0
"""...or this long after the end at the latest (a console that keeps writing)."""


class ConPtyHandle:
    def __init__(self, pty: Pty) -> None:
        self.pty = pty
        self.pid = pty.pid
        self._out, self._feed = socket.socketpair()
        self._out.setblocking(False)
        self.fd = self._out.fileno()
        self._exit: ProgramExit | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._last_output = time.monotonic()
        self._reader = threading.Thread(target=self._pump, name=f"conpty-{pty.pid}", daemon=True)
        self._reader.start()
        self._watcher = threading.Thread(target=self._watch, name=f"conpty-exit-{pty.pid}", daemon=True)
        self._watcher.start()

    def _pump(self) -> None:
        try:
            while True:
                data = self.pty.read(READ_CHUNK)
                if not data:
                    break
                self._last_output = time.monotonic()
                self._feed.sendall(data)
        except OSError:
            pass  # the console or the pair closed: either way the output ended
        finally:
            self._end_output()

    def _watch(self) -> None:
        try:
            while not self._closed and self.pty.exit_code() is None:
                time.sleep(EXIT_POLL_S)
        except Exception:  # noqa: BLE001, S110 - the program cannot be asked any more: its output ends all the same
            pass
        ended = time.monotonic()
        while not self._closed:
            now = time.monotonic()
            if now - max(self._last_output, ended) >= EXIT_DRAIN_S or now - ended >= EXIT_DRAIN_MAX_S:
                break
            time.sleep(EXIT_POLL_S / 2)
        self._end_output()

    def _end_output(self) -> None:
        """The host reads the end of the output: from the pump when the pipe ended, or from
        the watcher when the program did. Never once close() has closed the pair."""
        with self._lock:
            if self._closed:
                return
            try:
                self._feed.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def read(self, limit: int) -> bytes | None:
        try:
            data = self._out.recv(limit)
        except BlockingIOError:
            return b""
        except OSError:
            return None
        return data if data else None

    def write(self, data: bytes) -> int:
        return self.pty.write(data)

    def resize(self, cols: int, rows: int) -> None:
        self.pty.resize(cols, rows)

    def signal_foreground(self, number: int) -> int | None:
        """^C as the console delivers it: ConPTY turns it into CTRL_C_EVENT for every process
        attached to the console (Windows' foreground group). Other numbers: the proof path."""
        if number != INTERRUPT or self._exit is not None:
            return None
        self.pty.write(CTRL_C)
        return self.pid

    def poll_exit(self) -> ProgramExit | None:
        if self._exit is None:
            code = self.pty.exit_code()
            if code is not None:
                self._exit = ProgramExit(exit_code=code, exit_signal=None)
        return self._exit

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.pty.close()  # ends the pump's read; the job, not this, ends the program
        self._reader.join(timeout=2.0)
        for end in (self._out, self._feed):
            end.close()
