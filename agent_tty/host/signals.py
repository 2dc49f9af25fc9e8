"""The host's signals: handlers only set flags and wake the loop through a pipe."""

from __future__ import annotations

import os
import signal
from types import FrameType


class HostSignals:
    def __init__(self) -> None:
        self.term = False
        self.child = False
        self._read, self._write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)

    @classmethod
    def install(cls) -> HostSignals:
        signals = cls()
        signal.signal(signal.SIGTERM, signals._on_term)
        signal.signal(signal.SIGCHLD, signals._on_child)
        # The host has no terminal; a stray hang-up or interrupt must not end it.
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
            while os.read(self._read, 512):
                pass
        except BlockingIOError:
            pass
