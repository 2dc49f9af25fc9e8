"""The host's waits: each `wait` and `run` a client holds its connection for, judged on output
and on a timer, and the runs whose line waits for the shell to read it (ADR 0031)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from agent_tty.host.terminal import LiveScreen, Wait, visible_hash
from agent_tty.host.typeahead import POLL_S as HELD_POLL_S, HeldRun
from agent_tty.protocol.errors import AgentTtyError
from agent_tty.terminal.output import RESULT_OUTPUT_MAX, ProgramOutput, command_text, plain_text, result_output

if TYPE_CHECKING:
    from agent_tty.host.eventlog import EventLog
    from agent_tty.host.rpc_server import RpcServer
    from agent_tty.platform.types import ProgramExit
    from agent_tty.terminal.screen import SearchText

WAIT_CHECK_S = 0.02
"""How often waits are judged with no new output (a stable/idle wait, a deadline)."""
WAIT_SHARE = 0.2
"""Under output, waits are judged on each batch fed to the screen, but judging (it reads the
whole screen, scrollback included, and runs the pattern) takes at most about this share of the
host's time: after a check that took S, the next waits 4 S (a 1 ms check: batches 4 ms apart
are each judged; a 100 ms pattern: every 0.5 s), so a flood with a costly pattern still leaves
the program's output and the other commands 80 % of the loop."""
RUN_OUTPUT_MAX = RESULT_OUTPUT_MAX
"""Bytes of a command's output that `run` and `wait --output` return (the last ones)."""


class WaitsSide(Protocol):
    """What the waits read and ask of their host, and nothing else of it: the screen, the
    output stream and the log's seq to judge on, the socket to answer on, its timers, the
    program's end, and the typing of a run's line."""

    rpc: RpcServer
    live: LiveScreen
    output: ProgramOutput
    events: EventLog
    last_output: float

    @property
    def exit(self) -> ProgramExit | None: ...

    def after(self, delay: float, callback: Callable[[], None]) -> int: ...

    def cancel(self, timer_id: int) -> None: ...

    def may_type_run(self, waited_s: float) -> bool:
        """Whether a run's line typed now is echoed once (the shell reads it, and the echo of
        the run before it was followed)."""
        ...

    def type_run(self, command: str, postamble: str) -> int:
        """Type a run's line: its input's seq; AgentTtyError when the session takes no input."""
        ...


class Waits:
    def __init__(self, host: WaitsSide) -> None:
        self.host = host
        self.pending: list[Wait] = []
        self.timer: int | None = None
        self.next_check = 0.0
        """Monotonic time before which an output batch does not judge waits (WAIT_SHARE)."""
        self.held_runs: list[HeldRun] = []
        """Runs whose line waits for the shell to read it (ADR 0031), in the order they came."""
        self.held_timer: int | None = None

    def add(self, wait: Wait) -> None:
        """A new wait is judged at once (its text may be on the screen already), not when a
        check queued for earlier waits (up to WAIT_CHECK_S away) comes due."""
        self.pending.append(wait)
        if self.timer is not None:
            self.host.cancel(self.timer)
        self.timer = self.host.after(0, self.check)

    def on_output(self) -> None:
        """New output is on the screen: judge the waits it could satisfy now, unless judging
        has had its share of time (WAIT_SHARE); then the timer judges them when it is due."""
        if not any(wait.search is not None or wait.kind in ("text", "regex", "stable") for wait in self.pending):
            if self.timer is None:
                self.timer = self.host.after(WAIT_CHECK_S, self.check)
            return
        if self.timer is not None:
            self.host.cancel(self.timer)  # this check, now or at next_check, replaces it
            self.timer = None
        now = time.monotonic()
        if now < self.next_check:
            self.timer = self.host.after(self.next_check - now, self.check)
            return
        self.check()

    def check(self) -> None:
        self.timer = None
        if not self.pending:
            return
        host = self.host
        now = time.monotonic()
        text: SearchText | None = None
        for wait in list(self.pending):
            if wait.search is not None or wait.kind in ("text", "regex"):
                try:
                    if wait.search is not None:
                        matched = wait.search.matched(host.output)
                    else:
                        text = host.live.search_text() if text is None else text
                        matched = wait.matches(text)
                except AgentTtyError as err:  # the pattern ran past its budget (regex_budget)
                    self.pending.remove(wait)
                    host.rpc.answer_error(wait.conn, err)
                    continue
                if matched:
                    self.finish(wait, {"matched": True, "timedOut": False, "seq": host.events.seq})
                    continue
            elif wait.kind == "stable":
                current = visible_hash(host.live)
                if current != wait.last_hash:
                    wait.last_hash, wait.last_change = current, now
                elif now - wait.last_change >= wait.quiet_s:
                    self.finish(wait, {"matched": True, "timedOut": False, "seq": host.events.seq, "screenHash": current})
                    continue
            elif wait.kind == "idle":
                quiet_since = max(host.last_output, wait.started)
                if now - quiet_since >= wait.quiet_s:
                    self.finish(wait, {"matched": True, "timedOut": False, "seq": host.events.seq})
                    continue
            if wait.deadline is not None and now >= wait.deadline:
                self.finish(wait, {"matched": False, "timedOut": True, "seq": host.events.seq})
        spent = time.monotonic() - now
        self.next_check = now + spent / WAIT_SHARE
        if self.pending:
            # Slow patterns (each within its budget) get checked less often (WAIT_SHARE).
            self.timer = host.after(max(WAIT_CHECK_S, spent / WAIT_SHARE - spent), self.check)

    def finish(self, wait: Wait, result: dict[str, Any]) -> None:
        if wait in self.pending:
            self.pending.remove(wait)
        if wait.kind == "run":
            result = {**result, "seq": wait.seq}
            if not result.get("completed"):  # timed out, or the program ended first
                result = {**result, **self._run_output_so_far(wait)}
        elif "screenHash" not in result:
            # The screen the wait was judged on, as snapshot hashes it (a batch step's record).
            result = {**result, "screenHash": visible_hash(self.host.live)}
        result = {**result, **self.output_of(wait)}
        self.host.rpc.answer(wait.conn, result)

    def run_completed(self, token: str, status: int) -> None:
        """The run with this token printed its marker with the command's exit status."""
        for wait in list(self.pending):
            if wait.kind == "run" and wait.token == token:
                result = {"completed": True, "timedOut": False, "exitStatus": status, "markerSeq": self.host.events.seq}
                self.finish(wait, {**result, **self._run_output(wait, token)})

    def _run_output(self, wait: Wait, token: str) -> dict[str, Any]:
        """What the command printed: from the end of its line's echo to the marker."""
        output = self.host.output
        start = output.starts.get(wait.seq) if wait.seq is not None else None
        if start is None:
            return {}
        marker = output.find(b"\x1b]7770;" + token.encode(), start)
        if marker is None:
            return {}  # the echo's end was never seen: no output we could vouch for
        begin = max(start, marker - RUN_OUTPUT_MAX, output.base)
        return _command_output(output.since(begin, marker), begin > start, wait.echoes)

    def _run_output_so_far(self, wait: Wait) -> dict[str, Any]:
        """A run that did not complete: what the command printed since its line's echo ended;
        nothing (null) while that end was never seen."""
        output = self.host.output
        start = output.starts.get(wait.seq) if wait.seq is not None else None
        if start is None or (output.end == start and not output.open):
            return {}
        begin = max(start, output.end - RUN_OUTPUT_MAX, output.base)
        return _command_output(output.since(begin), begin > start, wait.echoes)

    def output_of(self, wait: Wait) -> dict[str, Any]:
        """`wait --output`: what the program printed since the wait's start, as `run` gives
        it (its last RUN_OUTPUT_MAX bytes)."""
        if wait.output_start is None:
            return {}
        output = self.host.output
        begin = max(wait.output_start, output.end - RUN_OUTPUT_MAX, output.base)
        return result_output(plain_text(output.since(begin)), begin > wait.output_start)

    # ------------------------------------------------------------------ runs held for the shell

    def hold_run(self, held: HeldRun) -> None:
        self.held_runs.append(held)
        self.type_held_runs()

    def type_held_runs(self) -> None:
        """Type the held runs, oldest first, each once the shell reads it and the echo of the
        run before it was followed (one echo filter at a time); answer those past their time."""
        self.held_timer = None
        host = self.host
        while self.held_runs and host.exit is None:
            held = self.held_runs[0]
            now = time.monotonic()
            if host.may_type_run(now - held.since):
                self.held_runs.pop(0)
                self._type_run(held)
                continue
            if held.deadline is not None and now >= held.deadline:
                self.held_runs.pop(0)
                host.rpc.answer(held.conn, {"seq": None, "completed": False, "timedOut": True})
                continue
            self.held_timer = host.after(HELD_POLL_S, self.type_held_runs)
            return

    def _type_run(self, held: HeldRun) -> None:
        try:
            seq = self.host.type_run(held.command, held.postamble)
        except AgentTtyError as err:
            self.host.rpc.answer_error(held.conn, err)
            return
        if not held.wait:
            self.host.rpc.answer(held.conn, {"seq": seq, "completed": False, "timedOut": False})
            return
        echoes = tuple(held.command.split("\n")[1:])
        self.add(Wait(held.conn, "run", held.deadline, token=held.token, seq=seq, echoes=echoes))

    # ------------------------------------------------------------------ the end

    def settle_at_exit(self, ended: dict[str, Any]) -> None:
        """The screen can change no more: judge every wait once, then end the rest (`ended`:
        the program's exit fields)."""
        if self.pending:
            self.check()
        seq = self.host.events.seq
        held, self.held_runs = self.held_runs, []
        for run in held:  # never typed: the program ended before its shell read them
            self.host.rpc.answer(run.conn, {"seq": None, "completed": False, "ended": True, "timedOut": False, **ended})
        for wait in list(self.pending):
            if wait.kind == "exit":
                self.finish(wait, {"matched": True, "timedOut": False, "seq": seq, **ended})
            else:
                self.finish(wait, {"matched": False, "ended": True, "timedOut": False, "seq": seq, **ended})

    def end_all(self, ended: dict[str, Any]) -> None:
        """The host stops: every wait still held is answered unmatched, with the session's end."""
        for wait in list(self.pending):  # finish takes each out of the list
            self.finish(wait, {"matched": False, "ended": True, **ended})


def _command_output(printed: bytes, truncated: bool, echoes: tuple[str, ...]) -> dict[str, Any]:
    """A run's `output`: for a command of several lines, without the echoes of its later lines
    (only when whole: where its start was cut off, what looks like an echo may be output)."""
    text = command_text(printed, echoes) if echoes and not truncated else plain_text(printed)
    return result_output(text, truncated)
