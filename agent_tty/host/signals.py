"""The host's signals: handlers only set flags and wake the loop through a pipe.

Windows has neither os.pipe2 nor SIGCHLD nor SIGHUP, and its select() takes sockets only: there
the wake-up is a socket pair (signal.set_wakeup_fd takes a socket there), the program's end is
seen on its output (the ConPTY's reader closes it), and a stop is create's TerminateProcess or
a `destroy` request (docs/adr/0016).
"""

from __future__ import annotations

import os
import signal
import socket
from types import FrameType


class HostSignals:
    def __init__(self) -> None:
        self.term = False
        self.child = False
        self._pair: tuple[socket.socket, socket.socket] | None = None
        if hasattr(os, "pipe2"):
            self._read, self._write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        else:
            reader, writer = socket.socketpair()
            for end in (reader, writer):
                end.setblocking(False)
            self._pair = (reader, writer)
            self._read, self._write = reader.fileno(), writer.fileno()

    @classmethod
    def install(cls) -> HostSignals:
        signals = cls()
        signal.signal(signal.SIGTERM, signals._on_term)
        if hasattr(signal, "SIGCHLD"):
            signal.signal(signal.SIGCHLD, signals._on_child)
        # The host has no terminal; a stray hang-up or interrupt must not end it.
        if hasattr(signal, "SIGHUP"):
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.set_wakeup_fd(signals._write, warn_on_full_buffer=False)
        return signals

    def _on_term(self, _signum: int, _frame: FrameType | None) -> None:
        self.term = True

    def _on_child(self, _signum: int, _frame: FrameType | None) -> None:
        self.child = True

    @property
    def fd(self) -> int:
        return self._read

    def drain(self) -> None:
        try:
            if self._pair is not None:
                while self._pair[0].recv(512):
                    pass
            else:
                while os.read(self._read, 512):
                    pass
        except BlockingIOError:
            pass
