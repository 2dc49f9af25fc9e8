"""The host's op table: one handler for each op of the protocol (protocol/rpc.OPS), and no other.

A handler gets the decoded request and its connection, and returns the answer, or None when
the answer comes later (it keeps the connection: a wait, a run, a destroy, a streamed input the
program has not read down to); it raises AgentTtyError for an error answer."""

from __future__ import annotations

import os
import signal as signals
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent_tty.host.shutdown import Reason
from agent_tty.host.terminal import Wait, compile_wait, visible_hash
from agent_tty.host.typeahead import HeldRun
from agent_tty.protocol import rpc
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.terminal.output import OutputSearch

if TYPE_CHECKING:
    from agent_tty.host.loop import Host

Answer = dict[str, Any] | None
Handler = Callable[[dict[str, Any], socket.socket], Answer]

PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"
"""Bracketed paste (DECSET 2004): what the program reads around a paste."""
INPUT_BACKLOG = 1 << 20
"""Input bytes held for a program that reads slowly: past this, a streamed input's answer
waits until the program has read down to it (the CLI sends the next part only then)."""


class Ops:
    """The handlers, by op name; `table` maps each of rpc.OPS to its method."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.table: dict[str, Handler] = {op: getattr(self, op) for op in rpc.OPS}

    def dispatch(self, request: dict[str, Any], conn: socket.socket) -> Answer:
        op = request.get("op")
        handler = self.table.get(op) if isinstance(op, str) else None
        if handler is None:
            raise AgentTtyError(ErrorCode.PROTOCOL_ERROR, f"unknown RPC op {op!r}")
        return handler(request, conn)

    def ping(self, _request: dict[str, Any], _conn: socket.socket) -> Answer:
        """Who serves: the session, its status and the two pids."""
        current = self.host.writer.current
        return {"sessionId": current.session_id, "status": current.status.value, "hostPid": os.getpid(), "childPid": current.child_pid}

    def inspect(self, _request: dict[str, Any], _conn: socket.socket) -> Answer:
        """The manifest as the host holds it."""
        return self.host.writer.current.to_obj()

    def resize(self, request: dict[str, Any], _conn: socket.socket) -> Answer:
        """The PTY's and the screen's new size, logged and recorded."""
        host = self.host
        host.require_commandable()
        from agent_tty.protocol.values import size_problem

        cols, rows = request.get("cols"), request.get("rows")
        problem = size_problem(cols, rows)  # a CLI of another version may send any size
        if problem is not None:
            raise AgentTtyError(ErrorCode.INVALID_INPUT, problem, cols=cols, rows=rows)
        assert isinstance(cols, int) and isinstance(rows, int)
        host.flush_held()
        host.program.resize(cols, rows)
        seq = host.events.append("resize", cols=cols, rows=rows)
        host.live.resize(cols, rows)
        host.shutdown.write(cols=cols, rows=rows)
        return {"cols": cols, "rows": rows, "seq": seq}

    def signal(self, request: dict[str, Any], _conn: socket.socket) -> Answer:
        """A signal to the program: a keyboard one to the terminal's foreground group, any
        other through the proof-then-kill path."""
        host = self.host
        host.require_commandable()
        number = request.get("signal")
        if not isinstance(number, int) or number <= 0:
            raise AgentTtyError(ErrorCode.INVALID_INPUT, f"invalid signal {number!r}")
        name = signals.Signals(number).name if number in signals.Signals._value2member_map_ else str(number)
        # A keyboard signal (INT, QUIT, TSTP) goes where a terminal sends it: to the
        # terminal's foreground group (a shell's running command), delivered by the PTY itself.
        foreground = getattr(host.program, "signal_foreground", None)
        group = foreground(number) if foreground is not None else None
        # The screen at a signal is a baseline, as at an input: `wait --after-seq` the
        # signal's seq waits for what the signal brought (a new prompt after INT).
        host.flush_held()
        if group is not None:
            seq = host.events.append("signal", signal=name, group=group)
            host.live.remember(seq)
            return {"signal": name, "delivered": True, "seq": seq, "group": group, "foreground": True}
        seq = host.events.append("signal", signal=name)
        host.live.remember(seq)
        verdict = host.platform.kill_group(host.group, number)
        return {"signal": name, "delivered": verdict.value == "owned", "seq": seq, "group": host.program.pid, "foreground": False}

    def destroy(self, _request: dict[str, Any], conn: socket.socket) -> Answer:
        """Start the shutdown; the answer comes once the session reads destroyed (`waiters`)."""
        host = self.host
        host.waiters.append(conn)
        try:
            host.shutdown.begin(Reason.DESTROY)
        except AgentTtyError:
            host.waiters.remove(conn)  # this destroy ends with the error; a later one may retry
            raise
        return None

    def input(self, request: dict[str, Any], conn: socket.socket) -> Answer:
        """`type` and `paste` (whole, or a streamed part), as typed input."""
        host = self.host
        data = str(request.get("data", "")).encode("utf-8", "surrogateescape")
        kind = request.get("kind") if request.get("kind") in ("type", "paste") else "type"
        part = request.get("part")  # a streamed input: "first", "more", "last"; None: whole
        continues = kind == "paste" and part in ("more", "last")
        if kind == "paste":
            host.require_commandable()
            if not continues:
                host.paste_bracketed = host.live.screen().bracketed_paste()
            if host.paste_bracketed:
                # A part after another input closed the bracket opens it again.
                opens = not continues or not host.paste_open
                closes = part in (None, "last")
                data = (PASTE_START if opens else b"") + data + (PASTE_END if closes else b"")
        result = {"seq": host.input(data, kind, continues_paste=continues), "bytes": len(data)}
        if kind == "paste":
            host.paste_open = host.paste_bracketed and part in ("first", "more")
        if part is not None and len(host.to_program) > INPUT_BACKLOG:
            host.input_waiters.append((conn, result))
            return None
        return result

    def keys(self, request: dict[str, Any], _conn: socket.socket) -> Answer:
        """Named keys, encoded for the program's cursor mode."""
        from agent_tty.terminal.keys import encode_key

        host = self.host
        host.require_commandable()
        names = request.get("keys")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise AgentTtyError(ErrorCode.INVALID_INPUT, "keys must be a list of key names")
        app_cursor = host.live.screen().app_cursor()
        data = b"".join(encode_key(name, app_cursor) for name in names)
        return {"seq": host.input(data, "keys"), "keys": names}

    def run(self, request: dict[str, Any], conn: socket.socket) -> Answer:
        """Queue a run: typed once its shell reads (ADR 0031), answered at its marker."""
        import secrets

        from agent_tty.host.run_line import check_run_line

        host = self.host
        host.require_commandable()
        command = str(request.get("command", "")).rstrip()
        check_run_line(command, host.program_in_foreground())
        token = secrets.token_hex(6)
        joiner = " " if command.endswith("&") else "; "
        marker = f"printf '\\033]7770;%s;%s\\007' {token} $?"
        timeout_ms = request.get("timeoutMs")
        now = time.monotonic()
        deadline = now + timeout_ms / 1000 if timeout_ms else None
        host.waits.hold_run(HeldRun(conn, command, joiner + marker, token, bool(request.get("wait", True)), deadline, now))
        return None

    def wait(self, request: dict[str, Any], conn: socket.socket) -> Answer:
        """A wait the connection holds until its condition, its time-out or the program's end."""
        host = self.host
        kind, pattern, quiet_s = compile_wait(request)
        timeout_ms = request.get("timeoutMs")
        deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms else None
        wait = Wait(conn, kind, deadline, pattern=pattern, quiet_s=quiet_s)
        if request.get("output"):
            wait.output_start = host.output.start_for(request.get("afterSeq"))
            if pattern is not None:
                wait.search = OutputSearch(pattern, wait.output_start, request.get("text"))
        elif pattern is not None:
            wait.set_baseline(host.live.baseline(request.get("afterSeq")))
        if kind == "exit" and host.exit is not None:
            answer = {"matched": True, "timedOut": False, "seq": host.events.seq, "screenHash": visible_hash(host.live)}
            return {**answer, **host.waits.output_of(wait)}
        host.waits.add(wait)
        return None

    def snapshot(self, request: dict[str, Any], _conn: socket.socket) -> Answer:
        """The screen now."""
        from agent_tty.terminal.screen import snapshot

        host = self.host
        return snapshot(
            host.live.screen(),
            host.events.seq,
            structured=bool(request.get("structured")),
            scrollback=bool(request.get("scrollback")),
            max_cells=request.get("maxCells"),
        )

    def mark(self, request: dict[str, Any], _conn: socket.socket) -> Answer:
        """A marker event."""
        label = str(request.get("label", ""))
        return {"seq": self.host.log_marker(label), "label": label}
