"""The host's reactor: one selector for its descriptors (the PTY, the signal pipe, the socket and
its connections) and one heap of timers (`after`, `cancel`), run on a single thread (ADR 0004)."""

from __future__ import annotations

import heapq
import itertools
import selectors
import time
from collections.abc import Callable


class Reactor:
    """What is ready and what is due. A descriptor's callback is registered as its key's data
    and called with (fileobj, mask); a timer's callback with nothing. `stopped` is asked between
    callbacks: once it says so, nothing more of this turn runs."""

    def __init__(self, stopped: Callable[[], bool]) -> None:
        self.stopped = stopped
        self.selector = selectors.DefaultSelector()
        self.timers: list[tuple[float, int, Callable[[], None]]] = []
        self._timer_ids = itertools.count()
        self.cancelled: set[int] = set()

    def after(self, delay: float, callback: Callable[[], None]) -> int:
        timer_id = next(self._timer_ids)
        heapq.heappush(self.timers, (time.monotonic() + delay, timer_id, callback))
        return timer_id

    def cancel(self, timer_id: int) -> None:
        self.cancelled.add(timer_id)

    def next_due(self) -> float | None:
        """Seconds until the next timer is due (0 when one is late); None without a timer."""
        return max(0.0, self.timers[0][0] - time.monotonic()) if self.timers else None

    def poll(self, timeout: float | None) -> bool:
        """Wait up to `timeout` for descriptors, then call each ready one's callback; whether
        any was ready."""
        events = self.selector.select(timeout)
        for key, mask in events:
            key.data(key.fileobj, mask)
            if self.stopped():
                break
        return bool(events)

    def run_timers(self) -> None:
        """The timers due when this turn began, earliest first (equal times in the order they
        were set); a cancelled one is skipped."""
        now = time.monotonic()
        while self.timers and self.timers[0][0] <= now and not self.stopped():
            _, timer_id, callback = heapq.heappop(self.timers)
            if timer_id in self.cancelled:
                self.cancelled.discard(timer_id)
                continue
            callback()
