"""The host's reactor (host/reactor.py): timers in order of time then of setting, cancelled ones
skipped, a turn that stops once the host is done, and descriptor callbacks on a real selector."""

from __future__ import annotations

import socket
import time

import pytest

from agent_tty.host.reactor import Reactor


def test_due_timers_run_earliest_first_and_in_setting_order_at_equal_times(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    reactor, ran = Reactor(lambda: False), []
    reactor.after(0.2, lambda: ran.append("late"))
    reactor.after(0.1, lambda: ran.append("first"))
    reactor.after(0.1, lambda: ran.append("second"))
    reactor.after(5.0, lambda: ran.append("not due"))
    assert reactor.next_due() == pytest.approx(0.1)
    clock[0] = 100.25
    reactor.run_timers()
    assert ran == ["first", "second", "late"]
    assert reactor.next_due() == pytest.approx(4.75)
    clock[0] = 200.0
    assert reactor.next_due() == 0.0  # late: no negative wait


def test_a_cancelled_timer_is_skipped_and_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    reactor, ran = Reactor(lambda: False), []
    kept = reactor.after(0, lambda: ran.append("kept"))
    gone = reactor.after(0, lambda: ran.append("gone"))
    reactor.cancel(gone)
    reactor.run_timers()
    assert ran == ["kept"] and reactor.cancelled == set() and reactor.timers == []
    assert kept != gone
    assert reactor.next_due() is None


def test_a_timer_set_during_a_turn_waits_for_a_later_one(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    reactor, ran = Reactor(lambda: False), []

    def first() -> None:
        ran.append("first")
        clock[0] += 0.001
        reactor.after(0, lambda: ran.append("next turn"))

    reactor.after(0, first)
    reactor.run_timers()
    assert ran == ["first"]
    reactor.run_timers()
    assert ran == ["first", "next turn"]


def test_once_stopped_no_more_of_the_turn_runs() -> None:
    done = [False]
    reactor, ran = Reactor(lambda: done[0]), []

    def stop() -> None:
        ran.append("stop")
        done[0] = True

    reactor.after(0, stop)
    reactor.after(0, lambda: ran.append("after the stop"))
    time.sleep(0.001)
    reactor.run_timers()
    assert ran == ["stop"]


def test_poll_calls_ready_descriptors_and_stops_between_them() -> None:
    reactor, seen = Reactor(lambda: len(seen) >= 1), []
    a, b = socket.socketpair()
    c, d = socket.socketpair()
    with a, b, c, d:
        for sock in (b, d):
            reactor.selector.register(sock, 1, lambda fileobj, mask: seen.append((fileobj, mask)))
        assert reactor.poll(0) is False
        a.sendall(b"x")
        c.sendall(b"y")
        assert reactor.poll(1.0) is True
        assert len(seen) == 1  # stopped after the first callback
        assert seen[0][0] in (b, d) and seen[0][1] == 1
    reactor.selector.close()
