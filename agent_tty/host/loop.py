"""The host: the program's PTY, its input, signals and upkeep, wired to its parts: the reactor
(host/reactor.py) runs the loop's descriptors and timers, the RPC server (host/rpc_server.py)
serves the socket and hands each request to the op table (host/ops.py), the output path
(host/output_path.py) takes each read to the log, the screen and the waits, the waits
(host/waits.py) answer what clients wait for, the shutdown machine (host/shutdown.py) ends the
session."""

from __future__ import annotations

import os
import selectors
import socket
import time
from collections.abc import Callable
from typing import Any

from agent_tty.host.ops import PASTE_END, INPUT_BACKLOG, Ops
from agent_tty.host.output_path import OutputPath
from agent_tty.host.reactor import Reactor
from agent_tty.host.replies import DROPPED_LABEL, TerminalReplies
from agent_tty.host.rpc_server import RpcServer
from agent_tty.host.eventlog import RETRY_FIRST_S, RETRY_MAX_S, EventLog
from agent_tty.host.shutdown import Reason, Shutdown, State
from agent_tty.host.signals import HostSignals
from agent_tty.host.typeahead import LineReader
from agent_tty.host.terminal import LiveScreen
from agent_tty.host.waits import Waits
from agent_tty.host.writer import ManifestWriter
from agent_tty.platform.manager import Platform
from agent_tty.platform.system import current
from agent_tty.platform.types import GroupRef, ProgramExit, ProgramHandle, Stop
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.protocol.status import policy
from agent_tty.storage.files import FolderGone, write_record
from agent_tty.storage.home import SessionPaths
from agent_tty.storage.records import ProgramRecord
from agent_tty.terminal.output import ProgramOutput

READ_CHUNK = 65536
IDLE_BUILD_S = 0.05
"""With no event for this long, or right after its first reply (create's readiness ping), the
host builds its screen model (see LiveScreen)."""

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
        self.line_reader = LineReader(writer.current.argv[0] if writer.current.argv else None)
        self.output = ProgramOutput()
        self.output_path = OutputPath(self)
        self.waits = Waits(self)
        self.ops = Ops(self)
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
                self.log_marker(DROPPED_LABEL)
            self.reactor.run_timers()
            if not self.done and self.shutdown.state is not State.FOLDER_GONE:
                self._rotate_log()
        self._close()
        return 0

    def _close(self) -> None:
        self._answer_inputs()
        self.waits.end_all(self._end_fields())
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
        except Exception:  # noqa: BLE001, S110 - the host is ending: gc sweeps what is left
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
            self.output_path.record(data)

    def _drain_output(self) -> None:
        while True:
            try:
                data = self.program.read(READ_CHUNK)
            except OSError:
                break
            if not data:
                break
            self.output_path.record(data)
        self.output_path.flush_held()

    def flush_held(self) -> None:
        """Output held mid-sequence goes first: before an input, a mark, a resize or a signal."""
        self.output_path.flush_held()

    def log_marker(self, label: str) -> int:
        self.flush_held()
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

    def input(self, data: bytes, kind: str, continues_paste: bool = False) -> int:
        self.require_commandable()
        if self.paste_open and not continues_paste:
            # A streamed paste that stopped part-way (its CLI gave up or died) or that another
            # input cut into: its end bracket goes first, so this input is not taken as pasted.
            data, self.paste_open = PASTE_END + data, False
        self.flush_held()  # output that came before this input is logged before it
        seq = self.events.append("input", data=data.decode("utf-8", "surrogateescape"), kind=kind)
        self.last_activity = time.monotonic()
        self._write_program(data)
        self.live.remember(seq)
        self.output.input(seq)
        self.output_path.input_sent(len(data))
        return seq

    # ------------------------------------------------------------------ runs (the waits' side)

    def may_type_run(self, waited_s: float) -> bool:
        if self.output_path.following_echo:
            return False  # one echo filter at a time: the run before is still being followed
        own = self._own_foreground() is not None
        return self.line_reader.reads(current().terminal_echoes(self.program.fd), own, waited_s)

    def type_run(self, command: str, postamble: str) -> int:
        seq = self.input((command + postamble + "\r").encode("utf-8", "surrogateescape"), "run")
        self.output_path.arm_echo(command, postamble)
        return seq

    # ------------------------------------------------------------------ signals

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
        self.waits.settle_at_exit({"exitCode": ended.exit_code, "exitSignal": ended.exit_signal})
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
        except Exception as err:  # noqa: BLE001 - a screen backend's error: the log grows until the next try
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

    def program_in_foreground(self) -> str | None:
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

    def require_commandable(self) -> None:
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
        """One request, to the handler of its op (host/ops.py, one for each of protocol/rpc.OPS):
        its answer, or None when the answer comes later (the handler keeps `conn`)."""
        return self.ops.dispatch(request, conn)
