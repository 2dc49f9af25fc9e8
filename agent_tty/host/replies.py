"""Answers to the program's terminal queries (DA, DSR, OSC 10/11 colours), bounded.

The screen answers every query it parses; the answers go to the program as input. A program that
asks millions of times and never reads its input would have the host hold every answer: past
REPLY_BACKLOG bytes of unread input, answers are dropped until the program reads again, and the
event log says where dropping began (one marker a burst).
"""

from __future__ import annotations

from collections.abc import Callable

REPLY_BACKLOG = 1 << 20
"""Unread input (typed or replies) past which a terminal reply is dropped: USAGE's 1 MiB."""
DROPPED_LABEL = "agent-tty: terminal replies dropped: the program has not read 1 MiB of its input"


class TerminalReplies:
    def __init__(self, write: Callable[[bytes], None], unread: Callable[[], int]) -> None:
        self._write = write
        self._unread = unread
        self.dropped = 0
        self._burst = False
        self._burst_unlogged = False

    def __call__(self, data: bytes) -> None:
        if self._unread() + len(data) > REPLY_BACKLOG:
            self.dropped += 1
            if not self._burst:
                self._burst = self._burst_unlogged = True
            return
        self._burst = False
        self._write(data)

    def burst_began(self) -> bool:
        """Whether dropping began since the last call (the host then logs DROPPED_LABEL)."""
        began, self._burst_unlogged = self._burst_unlogged, False
        return began
