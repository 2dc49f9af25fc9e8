"""The host: PTY output, input, waits, the op table and signals, wired to its parts: the reactor
(host/reactor.py) runs the loop's descriptors and timers, the RPC server (host/rpc_server.py)
serves the socket, the shutdown machine (host/shutdown.py) ends the session."""

from __future__ import annotations

import os
import selectors
import signal as signals
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent_tty.host.echo import EchoFilter, can_filter
from agent_tty.host.reactor import Reactor
from agent_tty.host.replies import DROPPED_LABEL, TerminalReplies
from agent_tty.host.rpc_server import RpcServer
from agent_tty.host.eventlog import RETRY_FIRST_S, RETRY_MAX_S, EventLog
from agent_tty.host.shutdown import Reason, Shutdown, State
from agent_tty.host.signals import HostSignals
from agent_tty.host.typeahead import POLL_S as HELD_POLL_S, HeldRun, LineReader
from agent_tty.host.terminal import RUN_MARKER, LiveScreen, Wait, compile_wait, visible_hash
from agent_tty.host.writer import ManifestWriter
from agent_tty.platform.manager import Platform
from agent_tty.platform.system import current
from agent_tty.platform.types import GroupRef, ProgramExit, ProgramHandle, Stop
from agent_tty.protocol import rpc
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.protocol.status import policy
from agent_tty.storage.files import FolderGone, write_record
from agent_tty.storage.home import SessionPaths
from agent_tty.storage.records import ProgramRecord
from agent_tty.terminal.output import RESULT_OUTPUT_MAX, OutputSearch, ProgramOutput, command_text, plain_text, result_output, visible

if TYPE_CHECKING:
    from agent_tty.terminal.screen import SearchText

READ_CHUNK = 65536
WAIT_CHECK_S = 0.02
"""How often waits are judged with no new output (a stable/idle wait, a deadline)."""
WAIT_SHARE = 0.2
"""Under output, waits are judged on each batch fed to the screen, but judging (it reads the
whole screen, scrollback included, and runs the pattern) takes at most about this share of the
host's time: after a check that took S, the next waits 4 S (a 1 ms check: batches 4 ms apart
are each judged; a 100 ms pattern: every 0.5 s), so a flood with a costly pattern still leaves
the program's output and the other commands 80 % of the loop."""
IDLE_BUILD_S = 0.05
"""With no event for this long, or right after its first reply (create's readiness ping), the
host builds its screen model (see LiveScreen)."""
HOLD_S = 0.05
"""An escape sequence cut by a read, mid-echo, waits this long at most for its end (ADR 0007)."""
PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"
"""Bracketed paste (DECSET 2004): what the program reads around a paste."""
INPUT_BACKLOG = 1 << 20
"""Input bytes held for a program that reads slowly: past this, a streamed input's answer
waits until the program has read down to it (the CLI sends the next part only then)."""
RUN_OUTPUT_MAX = RESULT_OUTPUT_MAX
"""Bytes of a command's output that `run` and `wait --output` return (the last ones)."""

FOLDER_CHECK_S = 2.0
"""How often a host checks that its session folder is still the one at its path. A folder
removed from under it (`rm -rf` of a Home, a rotated pytest basetemp) leaves a session that no
command can reach: the host then ends it as destroy would, without writing anywhere."""


class Host:
    def __init__(
        self,
        paths: SessionPaths,
        platform: Platform,
        writer: ManifestWriter,
        events: EventLog,
        program: ProgramHandle,
        group: GroupRef,
        signals: HostSignals,
        idle_timeout_ms: int | None,
    ) -> None:
        self.paths = paths
        self.platform = platform
        self.writer = writer
        self.events = events
        self.program = program
        self.group = group
        self.signals = signals
        self.idle_timeout_s = idle_timeout_ms / 1000 if idle_timeout_ms else None
        self.reactor = Reactor(lambda: self.done)
        self.shutdown = Shutdown(self, platform, writer, events, paths.destroyed_marker)
        self.exit: ProgramExit | None = None
        self.rpc = RpcServer(self, self.reactor.selector)
        self.waiters: list[socket.socket] = []
        self.last_activity = time.monotonic()
        self.last_output = time.monotonic()
        self.to_program = bytearray()
        self.replies = TerminalReplies(self._write_program, lambda: len(self.to_program))
        self.live = LiveScreen(writer.current.cols, writer.current.rows, self.replies)
        self.input_waiters: list[tuple[socket.socket, dict[str, Any]]] = []
        """Streamed inputs whose answer waits for the program to read (INPUT_BACKLOG)."""
        self.paste_bracketed = False
        self.paste_open = False
        """A streamed bracketed paste whose end bracket has not gone to the program yet."""
        self.marker_tail = b""
        self.held_runs: list[HeldRun] = []
        """Runs whose line waits for the shell to read it (ADR 0031), in the order they came."""
        self.held_timer: int | None = None
        self.line_reader = LineReader(writer.current.argv[0] if writer.current.argv else None)
        self.echo: EchoFilter | None = None
        """Hides the echo of the last `run`'s completion postamble (ADR 0007)."""
        self.gate_echo: EchoFilter | None = None
        """The filter whose echo end opens the output gate (the latest input was that run)."""
        self.gate_budget = 0
        self.held = b""
        self.hold_timer: int | None = None
        self.output = ProgramOutput()
        self.waits: list[Wait] = []
        self.wait_timer: int | None = None
        self.wait_next = 0.0
        """Monotonic time before which an output batch does not judge waits (WAIT_SHARE)."""
        self.log_timer: int | None = None
        self.flag_delay = 0.0
        self.folder_identity: tuple[int, int] | None = None
        self.folder_identity = self._folder_identity()
        events.on_failing = self._log_failing
        if events.failing:
            self._log_failing()

    @property
    def done(self) -> bool:
        """The loop stops (the shutdown machine says when)."""
        return self.shutdown.ended

    # ------------------------------------------------------------------ timers

    def after(self, delay: float, callback: Callable[[], None]) -> int:
        return self.reactor.after(delay, callback)

    def cancel(self, timer_id: int) -> None:
        self.reactor.cancel(timer_id)

    # ------------------------------------------------------------------ start and loop

    def listen(self, path: str) -> None:
        self.rpc.listen(path)

    def run(self) -> int:
        self.reactor.selector.register(self.program.fd, selectors.EVENT_READ, self._on_program_io)
        self.reactor.selector.register(self.signals.fd, selectors.EVENT_READ, self._on_signal)
        if self.idle_timeout_s:
            self.after(min(1.0, self.idle_timeout_s), self._check_idle)
        self.after(FOLDER_CHECK_S, self._check_folder)
        self._check_signals()
        while not self.done:
            timeout = self.reactor.next_due()
            if not self.live.built:
                timeout = IDLE_BUILD_S if timeout is None else min(timeout, IDLE_BUILD_S)
            ready = self.reactor.poll(timeout)
            if (self.rpc.replied or not ready) and not self.live.built and not self.done:
                # The first reply (create's readiness ping) has gone out: build now, while
                # create exits and its caller starts, not when the first command needs it.
                self.live.screen()
            if self.replies.burst_began() and not self.done:
                self._log_marker(DROPPED_LABEL)
            self.reactor.run_timers()
            if not self.done and self.shutdown.state is not State.FOLDER_GONE:
                self._rotate_log()
        self._close()
        return 0

    def _close(self) -> None:
        self._answer_inputs()
        for wait in self.waits:
            self._finish_wait(wait, {"matched": False, "ended": True, **self._end_fields()})
        self.waits.clear()
        for waiter in self.waiters:
            self.rpc.reply(waiter, {"status": self.writer.current.status.value, **self._end_fields()})
            waiter.close()
        self.waiters.clear()
        self.rpc.drop_all()  # connections kept open between requests: their callers read EOF
        self.stop_serving()
        self.program.close()
        self.events.close()
        try:
            self.platform.release_group(self.group)  # an empty cgroup leaf, say
        except Exception:
            pass

    def abandon(self) -> None:
        """The folder is gone under us: stop the program we started and end."""
        self.platform.kill_group(self.group, Stop.KILL)
        self.program.close()

    # ------------------------------------------------------------------ I/O

    def _on_program_io(self, _fd: object, mask: int) -> None:
        if mask & selectors.EVENT_WRITE:
            self._flush_program()
        if mask & selectors.EVENT_READ:
            self._on_output()

    def _on_output(self) -> None:
        data = self.program.read(READ_CHUNK)
        if data is None:
            self.reactor.selector.unregister(self.program.fd)
            self._check_exit()
            return
        if data:
            self._record_output(data)

    def _record_output(self, data: bytes, final: bool = False) -> None:
        if self.held:
            data, self.held = self.held + data, b""
            self._cancel_hold()
        hide: list[int] | None = None
        echo_end: int | None = None
        newline_from = 0
        echo = self.echo
        if echo is not None:
            decided, hide = echo.scan(data, self.live.screen(), final)
            if decided < len(data):
                self._hold(data[decided:])
                data = data[:decided]
            if echo.finished:
                self.echo = None
                if echo is self.gate_echo:
                    self.gate_echo = None
                    if echo.echo_end is not None:
                        echo_end = echo.echo_end
                    elif echo.failed_at is not None:
                        newline_from = echo.failed_at
        if echo_end is None and not self.output.open and self.gate_echo is None:
            echo_end = self._echo_end(data, newline_from)
        if not data:
            return
        self.events.output(data, hide or None, echo_end)
        self.live.feed(visible(data, hide) if hide else data)
        self.output.output(data, hide, echo_end)
        self.last_activity = self.last_output = time.monotonic()
        window = self.marker_tail + data
        for match in RUN_MARKER.finditer(window):
            if match.end() > len(self.marker_tail):
                self._run_completed(match.group(1).decode(), int(match.group(2)))
        self.marker_tail = window[-64:]
        if self.waits:
            self._waits_on_output()

    def _drain_output(self) -> None:
        while True:
            try:
                data = self.program.read(READ_CHUNK)
            except OSError:
                break
            if not data:
                break
            self._record_output(data)
        self._flush_held()

    def _hold(self, rest: bytes) -> None:
        """The echo filter needs the next read to judge `rest` (an escape sequence cut in two)."""
        self.held = rest
        self.hold_timer = self.after(HOLD_S, self._hold_expired)

    def _hold_expired(self) -> None:
        self.hold_timer = None
        self._flush_held()

    def _cancel_hold(self) -> None:
        if self.hold_timer is not None:
            self.cancel(self.hold_timer)
            self.hold_timer = None

    def _flush_held(self) -> None:
        """Before an input or a mark, at the end, or when the rest of a held sequence never came."""
        if self.held:
            self._record_output(b"", final=True)

    def _echo_end(self, data: bytes, start: int) -> int | None:
        """Where the echo of the last input ends: after the first newline the program prints
        (from `start`); at the end of `data` when none came within the input's budget."""
        newline = data.find(b"\n", start)
        if newline >= 0:
            return newline + 1
        self.gate_budget -= len(data)
        return len(data) if self.gate_budget < 0 else None

    def _arm_echo(self, command: str, postamble: str) -> None:
        """Hide the echo of `postamble` that `run` typed after the last line of `command`. The
        end of that echo opens the output's gate, except for a command of several lines: its
        output starts after its first line's echo (the shell runs each line as it reads it),
        and the echoes of the later lines are cut from its text (`without_echoes`)."""
        line = (command + postamble).rsplit("\n", 1)[-1]
        if len(line) > len(postamble) and can_filter(line):
            self.echo = EchoFilter(line, len(line) - len(postamble))
            self.gate_echo = None if "\n" in command else self.echo

    def _log_marker(self, label: str) -> int:
        self._flush_held()
        seq = self.events.append("marker", label=label)
        self.live.remember(seq)
        self.output.mark(seq)
        return seq

    # ------------------------------------------------------------------ input

    def _write_program(self, data: bytes) -> None:
        """Input and terminal replies, in order; what the PTY cannot take now waits for EVENT_WRITE."""
        if self.exit is not None:
            return
        self.to_program.extend(data)
        self._flush_program()

    def _flush_program(self) -> None:
        while self.to_program:
            try:
                written = self.program.write(bytes(self.to_program[:65536]))
            except OSError:
                self.to_program.clear()
                break
            if written <= 0:
                break
            del self.to_program[:written]
        if self.input_waiters and len(self.to_program) <= INPUT_BACKLOG:
            self._answer_inputs()
        mask = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.to_program else 0)
        try:
            self.reactor.selector.modify(self.program.fd, mask, self._on_program_io)
        except (KeyError, ValueError):
            pass

    def _answer_inputs(self) -> None:
        waiting, self.input_waiters = self.input_waiters, []
        for conn, result in waiting:
            self.rpc.answer(conn, result)

    def _input(self, data: bytes, kind: str, continues_paste: bool = False) -> int:
        self._require_commandable()
        if self.paste_open and not continues_paste:
            # A streamed paste that stopped part-way (its CLI gave up or died) or that another
            # input cut into: its end bracket goes first, so this input is not taken as pasted.
            data, self.paste_open = PASTE_END + data, False
        self._flush_held()  # output that came before this input is logged before it
        seq = self.events.append("input", data=data.decode("utf-8", "surrogateescape"), kind=kind)
        self.last_activity = time.monotonic()
        self._write_program(data)
        self.live.remember(seq)
        self.output.input(seq)
        self.gate_echo = None
        self.gate_budget = 4 * len(data) + 4096
        return seq

    # ------------------------------------------------------------------ waits

    def _waits_on_output(self) -> None:
        """New output is on the screen: judge the waits it could satisfy now, unless judging
        has had its share of time (WAIT_SHARE); then the timer judges them when it is due."""
        if not any(wait.search is not None or wait.kind in ("text", "regex", "stable") for wait in self.waits):
            if self.wait_timer is None:
                self.wait_timer = self.after(WAIT_CHECK_S, self._check_waits)
            return
        if self.wait_timer is not None:
            self.cancel(self.wait_timer)  # this check, now or at wait_next, replaces it
            self.wait_timer = None
        now = time.monotonic()
        if now < self.wait_next:
            self.wait_timer = self.after(self.wait_next - now, self._check_waits)
            return
        self._check_waits()

    def _check_waits(self) -> None:
        self.wait_timer = None
        if not self.waits:
            return
        now = time.monotonic()
        text: SearchText | None = None
        for wait in list(self.waits):
            if wait.search is not None or wait.kind in ("text", "regex"):
                try:
                    if wait.search is not None:
                        matched = wait.search.matched(self.output)
                    else:
                        text = self.live.search_text() if text is None else text
                        matched = wait.matches(text)
                except AgentTtyError as err:  # the pattern ran past its budget (regex_budget)
                    self.waits.remove(wait)
                    self.rpc.answer_error(wait.conn, err)
                    continue
                if matched:
                    self._finish_wait(wait, {"matched": True, "timedOut": False, "seq": self.events.seq})
                    continue
            elif wait.kind == "stable":
                current = visible_hash(self.live)
                if current != wait.last_hash:
                    wait.last_hash, wait.last_change = current, now
                elif now - wait.last_change >= wait.quiet_s:
                    self._finish_wait(wait, {"matched": True, "timedOut": False, "seq": self.events.seq, "screenHash": current})
                    continue
            elif wait.kind == "idle":
                quiet_since = max(self.last_output, wait.started)
                if now - quiet_since >= wait.quiet_s:
                    self._finish_wait(wait, {"matched": True, "timedOut": False, "seq": self.events.seq})
                    continue
            if wait.deadline is not None and now >= wait.deadline:
                self._finish_wait(wait, {"matched": False, "timedOut": True, "seq": self.events.seq})
        spent = time.monotonic() - now
        self.wait_next = now + spent / WAIT_SHARE
        if self.waits:
            # Slow patterns (each within its budget) get checked less often (WAIT_SHARE).
            self.wait_timer = self.after(max(WAIT_CHECK_S, spent / WAIT_SHARE - spent), self._check_waits)

    def _finish_wait(self, wait: Wait, result: dict[str, Any]) -> None:
        if wait in self.waits:
            self.waits.remove(wait)
        if wait.kind == "run":
            result = {**result, "seq": wait.seq}
            if not result.get("completed"):  # timed out, or the program ended first
                result = {**result, **self._run_output_so_far(wait)}
        elif "screenHash" not in result:
            # The screen the wait was judged on, as snapshot hashes it (a batch step's record).
            result = {**result, "screenHash": visible_hash(self.live)}
        result = {**result, **self._wait_output(wait)}
        self.rpc.answer(wait.conn, result)

    def _run_completed(self, token: str, status: int) -> None:
        for wait in list(self.waits):
            if wait.kind == "run" and wait.token == token:
                result = {"completed": True, "timedOut": False, "exitStatus": status, "markerSeq": self.events.seq}
                self._finish_wait(wait, {**result, **self._run_output(wait, token)})

    def _run_output(self, wait: Wait, token: str) -> dict[str, Any]:
        """What the command printed: from the end of its line's echo to the marker."""
        start = self.output.starts.get(wait.seq) if wait.seq is not None else None
        if start is None:
            return {}
        marker = self.output.find(b"\x1b]7770;" + token.encode(), start)
        if marker is None:
            return {}  # the echo's end was never seen: no output we could vouch for
        begin = max(start, marker - RUN_OUTPUT_MAX, self.output.base)
        return _command_output(self.output.since(begin, marker), begin > start, wait.echoes)

    def _run_output_so_far(self, wait: Wait) -> dict[str, Any]:
        """A run that did not complete: what the command printed since its line's echo ended;
        nothing (null) while that end was never seen."""
        start = self.output.starts.get(wait.seq) if wait.seq is not None else None
        if start is None or (self.output.end == start and not self.output.open):
            return {}
        begin = max(start, self.output.end - RUN_OUTPUT_MAX, self.output.base)
        return _command_output(self.output.since(begin), begin > start, wait.echoes)

    def _wait_output(self, wait: Wait) -> dict[str, Any]:
        """`wait --output`: what the program printed since the wait's start, as `run` gives
        it (its last RUN_OUTPUT_MAX bytes)."""
        if wait.output_start is None:
            return {}
        begin = max(wait.output_start, self.output.end - RUN_OUTPUT_MAX, self.output.base)
        return result_output(plain_text(self.output.since(begin)), begin > wait.output_start)

    def _type_held_runs(self) -> None:
        """Type the held runs, oldest first, each once the shell reads it and the echo of the
        run before it was followed (one echo filter at a time); answer those past their time."""
        self.held_timer = None
        while self.held_runs and self.exit is None:
            held = self.held_runs[0]
            now = time.monotonic()
            if (self.echo is None or self.echo.finished) and self._shell_reads(now - held.since):
                self.held_runs.pop(0)
                self._type_run(held)
                continue
            if held.deadline is not None and now >= held.deadline:
                self.held_runs.pop(0)
                self.rpc.answer(held.conn, {"seq": None, "completed": False, "timedOut": True})
                continue
            self.held_timer = self.after(HELD_POLL_S, self._type_held_runs)
            return

    def _shell_reads(self, waited_s: float) -> bool:
        own = self._own_foreground() is not None
        return self.line_reader.reads(current().terminal_echoes(self.program.fd), own, waited_s)

    def _type_run(self, held: HeldRun) -> None:
        try:
            seq = self._input((held.command + held.postamble + "\r").encode("utf-8", "surrogateescape"), "run")
        except AgentTtyError as err:
            self.rpc.answer_error(held.conn, err)
            return
        self._arm_echo(held.command, held.postamble)
        if not held.wait:
            self.rpc.answer(held.conn, {"seq": seq, "completed": False, "timedOut": False})
            return
        echoes = tuple(held.command.split("\n")[1:])
        self._add_wait(Wait(held.conn, "run", held.deadline, token=held.token, seq=seq, echoes=echoes))

    def _add_wait(self, wait: Wait) -> None:
        """A new wait is judged at once (its text may be on the screen already), not when a
        check queued for earlier waits (up to WAIT_CHECK_S away) comes due."""
        self.waits.append(wait)
        if self.wait_timer is not None:
            self.cancel(self.wait_timer)
        self.wait_timer = self.after(0, self._check_waits)

    def _on_signal(self, _fd: object, _mask: int) -> None:
        self.signals.drain()
        self._check_signals()

    def _check_signals(self) -> None:
        if self.signals.child:
            self.signals.child = False
            self._check_exit()
        if self.signals.term:
            self.shutdown.begin(Reason.SIGTERM)  # ignored while one that outranks it runs (TRANSITIONS)

    # ------------------------------------------------------------------ the program's end

    def _check_exit(self) -> None:
        if self.exit is not None:
            return
        ended = self.program.poll_exit()
        if ended is None:
            return
        self._record_reap()
        self.exit = ended
        self._drain_output()
        self.events.append("exit", exit_code=ended.exit_code, exit_signal=ended.exit_signal)
        self._settle_waits_at_exit()
        self.shutdown.on_exit()

    def _record_reap(self) -> None:
        """RecordsReap: what the plugin reads right after our waitpid (macos_ps: the moment, on
        its clock) goes on our GroupRef and into program.json before any record says the program
        ended, so every later judge of a leftover has it (ADR 0026). A write that fails leaves
        the record without it: the leftovers then read ambiguous, never signalled."""
        try:
            reaped = self.platform.capture_reap(self.group.mechanism, self.group.pid)
        except (OSError, AgentTtyError):
            return
        if reaped is None:
            return
        self.group = self.group.replace(reaped=reaped)
        if self.shutdown.state is State.FOLDER_GONE:
            return  # the path may name somebody else's folder now (ADR 0024)
        record = ProgramRecord(
            version=1, mechanism=self.group.mechanism, pid=self.group.pid, proof=self.group.proof, reaped=reaped
        )
        try:
            write_record(self.paths.program, record)
        except (FolderGone, AgentTtyError):
            pass  # the folder is gone, or a full disk: our own GroupRef still carries it

    def _settle_waits_at_exit(self) -> None:
        """The screen can change no more: judge every wait once, then end the rest."""
        if self.waits:
            self._check_waits()
        ended = {"exitCode": self.exit.exit_code if self.exit else None, "exitSignal": self.exit.exit_signal if self.exit else None}
        held, self.held_runs = self.held_runs, []
        for run in held:  # never typed: the program ended before its shell read them
            self.rpc.answer(run.conn, {"seq": None, "completed": False, "ended": True, "timedOut": False, **ended})
        for wait in list(self.waits):
            if wait.kind == "exit":
                self._finish_wait(wait, {"matched": True, "timedOut": False, "seq": self.events.seq, **ended})
            else:
                self._finish_wait(wait, {"matched": False, "ended": True, "timedOut": False, "seq": self.events.seq, **ended})

    # ------------------------------------------------------------------ the event log

    def _log_failing(self) -> None:
        """The event log's writes started to fail: retry them, and say so in the manifest."""
        if self.log_timer is None:
            self.log_timer = self.after(RETRY_FIRST_S, self._retry_log)

    def _retry_log(self) -> None:
        self.log_timer = None
        delay = self.events.retry()
        lost = self.events.lost
        if lost is not None and lost != self.writer.current.log_incomplete and not self.writer.closed and not self.done:
            if self.shutdown.write():
                self.flag_delay = 0.0
            elif not self.done:
                self.flag_delay = min(self.flag_delay * 2, RETRY_MAX_S) if self.flag_delay else RETRY_FIRST_S
                delay = min(delay, self.flag_delay) if delay is not None else self.flag_delay
        if delay is not None and not self.done:
            self.log_timer = self.after(delay, self._retry_log)

    def _rotate_log(self) -> None:
        """The event log's disk bound (ADR 0015): past its segment size it starts a new file
        with a checkpoint of the screen. Called once a loop turn, after the appends, when the
        live screen has been fed everything the log holds."""
        if not self.events.rotation_due():
            return
        from agent_tty.terminal.checkpoint import checkpoint_bytes

        screen = self.live.screen()
        cols, rows = screen.size
        try:
            checkpoint = checkpoint_bytes(screen)
        except Exception as err:  # a screen backend's error: the log grows until the next try
            self.events.rotation_failed(f"checkpoint: {type(err).__name__}: {err}")
            return
        self.events.rotate(checkpoint, cols, rows)

    # ------------------------------------------------------------------ the folder and idleness

    def _folder_identity(self) -> tuple[int, int] | None:
        """The folder's (device, inode) at its path; None when nothing is there. A path that
        cannot be read for another reason (a Home made unsearchable) is not a removal."""
        try:
            info = os.stat(self.paths.folder, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError:
            return self.folder_identity
        return (info.st_dev, info.st_ino)

    def _check_folder(self) -> None:
        if self.done or not self.shutdown.may(State.FOLDER_GONE):
            return
        if self.folder_identity is None or self._folder_identity() == self.folder_identity:
            self.after(FOLDER_CHECK_S, self._check_folder)
            return
        self.shutdown.folder_gone()

    def stop_serving(self) -> None:
        """Take no new connection, and remove the socket (in the private socket folder that
        trusted_socket_path checked). At the end, and once the folder is gone (no caller can
        reach the session through its records; a kept connection is answered
        SESSION_NOT_RUNNING, as shutdown is set)."""
        self.rpc.stop_serving()

    def _check_idle(self) -> None:
        if self.shutdown.state is not State.SERVING or self.exit is not None or self.idle_timeout_s is None:
            return
        idle = time.monotonic() - self.last_activity
        if idle >= self.idle_timeout_s:
            self.events.append("signal", signal="SIGHUP", label="idle-timeout")
            self.shutdown.begin(Reason.IDLE)
        else:
            self.after(min(1.0, self.idle_timeout_s - idle), self._check_idle)

    def _program_in_foreground(self) -> str | None:
        """The session's program's name while its own group has the terminal (`create --
        python3 -q`); None while a job of it does (a shell's command may be gone a moment
        later, and what it types ahead is the shell's) or where it cannot be told."""
        foreground = self._own_foreground()
        return foreground[1] if foreground is not None else None

    def _own_foreground(self) -> tuple[int, str | None] | None:
        """The terminal's foreground group and its leader's name while it is the program's own
        group (not a job of it); None otherwise or where it cannot be told."""
        foreground = current().foreground(self.program.fd)
        return foreground if foreground is not None and foreground[0] == self.group.pid else None

    def _end_fields(self) -> dict[str, Any]:
        current = self.writer.current
        return {"exitCode": current.exit_code, "exitSignal": current.exit_signal}

    def _require_commandable(self) -> None:
        status = self.writer.current.status
        if not policy(status).commandable or self.shutdown.state is not State.SERVING:
            raise AgentTtyError(
                ErrorCode.SESSION_NOT_RUNNING,
                f"session {self.writer.current.session_id} is {status.value}",
                status=status.value,
            )

    def log_crash(self) -> None:
        from agent_tty.host.main import log_crash

        log_crash(self.paths)

    def dispatch(self, request: dict[str, Any], conn: socket.socket) -> dict[str, Any] | None:
        """One request, to the handler of its op (`_op_<op>`, one for each of protocol/rpc.OPS):
        its answer, or None when the answer comes later (the handler keeps `conn`)."""
        op = request.get("op")
        if op not in rpc.OPS:
            raise AgentTtyError(ErrorCode.PROTOCOL_ERROR, f"unknown RPC op {op!r}")
        handler: Callable[[dict[str, Any], socket.socket], dict[str, Any] | None] = getattr(self, f"_op_{op}")
        return handler(request, conn)

    # ------------------------------------------------------------------ the ops

    def _op_ping(self, _request: dict[str, Any], _conn: socket.socket) -> dict[str, Any] | None:
        """Who serves: the session, its status and the two pids."""
        current = self.writer.current
        return {"sessionId": current.session_id, "status": current.status.value, "hostPid": os.getpid(), "childPid": current.child_pid}

    def _op_inspect(self, _request: dict[str, Any], _conn: socket.socket) -> dict[str, Any] | None:
        """The manifest as the host holds it."""
        current = self.writer.current
        return current.to_obj()

    def _op_resize(self, request: dict[str, Any], _conn: socket.socket) -> dict[str, Any] | None:
        """The PTY's and the screen's new size, logged and recorded."""
        self._require_commandable()
        from agent_tty.protocol.values import size_problem

        cols, rows = request.get("cols"), request.get("rows")
        problem = size_problem(cols, rows)  # a CLI of another version may send any size
        if problem is not None:
            raise AgentTtyError(ErrorCode.INVALID_INPUT, problem, cols=cols, rows=rows)
        assert isinstance(cols, int) and isinstance(rows, int)
        self._flush_held()
        self.program.resize(cols, rows)
        seq = self.events.append("resize", cols=cols, rows=rows)
        self.live.resize(cols, rows)
        self.shutdown.write(cols=cols, rows=rows)
        return {"cols": cols, "rows": rows, "seq": seq}

    def _op_signal(self, request: dict[str, Any], _conn: socket.socket) -> dict[str, Any] | None:
        """A signal to the program: a keyboard one to the terminal's foreground group, any
        other through the proof-then-kill path."""
        self._require_commandable()
        number = request.get("signal")
        if not isinstance(number, int) or number <= 0:
            raise AgentTtyError(ErrorCode.INVALID_INPUT, f"invalid signal {number!r}")
        name = signals.Signals(number).name if number in signals.Signals._value2member_map_ else str(number)
        # A keyboard signal (INT, QUIT, TSTP) goes where a terminal sends it: to the
        # terminal's foreground group (a shell's running command), delivered by the PTY itself.
        foreground = getattr(self.program, "signal_foreground", None)
        group = foreground(number) if foreground is not None else None
        # The screen at a signal is a baseline, as at an input: `wait --after-seq` the
        # signal's seq waits for what the signal brought (a new prompt after INT).
        self._flush_held()
        if group is not None:
            seq = self.events.append("signal", signal=name, group=group)
            self.live.remember(seq)
            return {"signal": name, "delivered": True, "seq": seq, "group": group, "foreground": True}
        seq = self.events.append("signal", signal=name)
        self.live.remember(seq)
        verdict = self.platform.kill_group(self.group, number)
        return {"signal": name, "delivered": verdict.value == "owned", "seq": seq, "group": self.program.pid, "foreground": False}

    def _op_destroy(self, _request: dict[str, Any], conn: socket.socket) -> dict[str, Any] | None:
        """Start the shutdown; the answer comes once the session reads destroyed (`waiters`)."""
        self.waiters.append(conn)
        try:
            self.shutdown.begin(Reason.DESTROY)
        except AgentTtyError:
            self.waiters.remove(conn)  # this destroy ends with the error; a later one may retry
            raise
        return None

    def _op_input(self, request: dict[str, Any], conn: socket.socket) -> dict[str, Any] | None:
        """`type` and `paste` (whole, or a streamed part), as typed input."""
        data = str(request.get("data", "")).encode("utf-8", "surrogateescape")
        kind = request.get("kind") if request.get("kind") in ("type", "paste") else "type"
        part = request.get("part")  # a streamed input: "first", "more", "last"; None: whole
        continues = kind == "paste" and part in ("more", "last")
        if kind == "paste":
            self._require_commandable()
            if not continues:
                self.paste_bracketed = self.live.screen().bracketed_paste()
            if self.paste_bracketed:
                # A part after another input closed the bracket opens it again.
                opens = not continues or not self.paste_open
                closes = part in (None, "last")
                data = (PASTE_START if opens else b"") + data + (PASTE_END if closes else b"")
        result = {"seq": self._input(data, kind, continues_paste=continues), "bytes": len(data)}
        if kind == "paste":
            self.paste_open = self.paste_bracketed and part in ("first", "more")
        if part is not None and len(self.to_program) > INPUT_BACKLOG:
            self.input_waiters.append((conn, result))
            return None
        return result

    def _op_keys(self, request: dict[str, Any], _conn: socket.socket) -> dict[str, Any] | None:
        """Named keys, encoded for the program's cursor mode."""
        from agent_tty.terminal.keys import encode_key

        self._require_commandable()
        names = request.get("keys")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise AgentTtyError(ErrorCode.INVALID_INPUT, "keys must be a list of key names")
        app_cursor = self.live.screen().app_cursor()
        data = b"".join(encode_key(name, app_cursor) for name in names)
        return {"seq": self._input(data, "keys"), "keys": names}

    def _op_run(self, request: dict[str, Any], conn: socket.socket) -> dict[str, Any] | None:
        """Queue a run: typed once its shell reads (ADR 0031), answered at its marker."""
        import secrets

        from agent_tty.host.run_line import check_run_line

        self._require_commandable()
        command = str(request.get("command", "")).rstrip()
        check_run_line(command, self._program_in_foreground())
        token = secrets.token_hex(6)
        joiner = " " if command.endswith("&") else "; "
        marker = f"printf '\\033]7770;%s;%s\\007' {token} $?"
        timeout_ms = request.get("timeoutMs")
        now = time.monotonic()
        deadline = now + timeout_ms / 1000 if timeout_ms else None
        self.held_runs.append(HeldRun(conn, command, joiner + marker, token, bool(request.get("wait", True)), deadline, now))
        self._type_held_runs()
        return None

    def _op_wait(self, request: dict[str, Any], conn: socket.socket) -> dict[str, Any] | None:
        """A wait the connection holds until its condition, its time-out or the program's end."""
        kind, pattern, quiet_s = compile_wait(request)
        timeout_ms = request.get("timeoutMs")
        deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms else None
        wait = Wait(conn, kind, deadline, pattern=pattern, quiet_s=quiet_s)
        if request.get("output"):
            wait.output_start = self.output.start_for(request.get("afterSeq"))
            if pattern is not None:
                wait.search = OutputSearch(pattern, wait.output_start, request.get("text"))
        elif pattern is not None:
            wait.set_baseline(self.live.baseline(request.get("afterSeq")))
        if kind == "exit" and self.exit is not None:
            return {"matched": True, "timedOut": False, "seq": self.events.seq, "screenHash": visible_hash(self.live), **self._wait_output(wait)}
        self._add_wait(wait)
        return None

    def _op_snapshot(self, request: dict[str, Any], _conn: socket.socket) -> dict[str, Any] | None:
        """The screen now."""
        from agent_tty.terminal.screen import snapshot

        return snapshot(
            self.live.screen(),
            self.events.seq,
            structured=bool(request.get("structured")),
            scrollback=bool(request.get("scrollback")),
            max_cells=request.get("maxCells"),
        )

    def _op_mark(self, request: dict[str, Any], _conn: socket.socket) -> dict[str, Any] | None:
        """A marker event."""
        label = str(request.get("label", ""))
        return {"seq": self._log_marker(label), "label": label}


def _command_output(printed: bytes, truncated: bool, echoes: tuple[str, ...]) -> dict[str, Any]:
    """A run's `output`: for a command of several lines, without the echoes of its later lines
    (only when whole: where its start was cut off, what looks like an echo may be output)."""
    text = command_text(printed, echoes) if echoes and not truncated else plain_text(printed)
    return result_output(text, truncated)
