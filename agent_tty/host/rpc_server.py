"""The host's RPC server: it accepts connections, walks a transport's handshake (the loopback
gate), frames request lines, serves each connection's requests in order and writes the replies;
each decoded request goes to the host's op table (`dispatch`)."""

from __future__ import annotations

import os
import selectors
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from agent_tty.platform.system import current
from agent_tty.protocol import rpc
from agent_tty.protocol.errors import AgentTtyError, ErrorCode

if TYPE_CHECKING:
    from agent_tty.platform.loopback import Gate

HANDSHAKE_S = 2.0
"""How long a connection in a transport's handshake may go without a step before it is dropped
(a stranger's: a hello, then nothing or a wrong proof, so 2 periods at most)."""
HANDSHAKE_LINE_MAX = 512
"""The longest handshake line a host reads (the caller's two are under 100 bytes each)."""
MAX_UNPROVEN = 64
"""Connections in their handshake at once; past it the oldest is dropped. A stranger flooding a
loopback port holds at most this many descriptors and about 64 KiB of the host's memory."""
ACCEPT_PAUSE_S = 0.1
"""After a failed accept (out of descriptors), the host accepts again this long after."""
REQUEST_CHUNK = 65536
"""What one read of a proven connection takes."""


class ServerSide(Protocol):
    """What the server reads and asks of its host, and nothing else of it: whether the host is
    done, its timers, its op table and its crash log."""

    @property
    def done(self) -> bool: ...

    def after(self, delay: float, callback: Callable[[], None]) -> int: ...

    def dispatch(self, request: dict[str, Any], conn: socket.socket) -> dict[str, Any] | None:
        """The answer to one decoded request, or None when a handler keeps `conn` and answers
        later (through `reply` and `served`); raises AgentTtyError for an error answer."""
        ...

    def log_crash(self) -> None:
        """A handler raised something other than AgentTtyError: note it in host.log."""
        ...


class RpcServer:
    """The socket side of the host, on the host's selector. A connection is in `buffers` from
    its accept to its drop; one in its transport's handshake is in `gates` too."""

    def __init__(self, host: ServerSide, selector: selectors.BaseSelector) -> None:
        self.host = host
        self.selector = selector
        self.server: socket.socket | None = None
        self.socket_path: str | None = None
        self.buffers: dict[socket.socket, bytearray] = {}
        self.gates: dict[socket.socket, Gate] = {}
        """Connections still in the transport's handshake (a loopback port's), and their gate."""
        self.replied = False
        """A reply has been sent (the host builds its screen model at the end of that loop turn)."""

    def listen(self, path: str) -> None:
        server = current().listen(path)
        self.server, self.socket_path = server, path
        self.selector.register(server, selectors.EVENT_READ, self._on_accept)

    def stop_serving(self) -> None:
        """Take no new connection, and remove the socket (in the private socket folder that
        trusted_socket_path checked)."""
        if self.server is None:
            return
        try:
            self.selector.unregister(self.server)
        except (KeyError, ValueError):
            pass
        self.server.close()
        self.server = None
        if self.socket_path:
            try:
                os.unlink(self.socket_path)
            except OSError:
                pass

    def drop_all(self) -> None:
        """At the end: connections kept open between requests are closed; their callers read EOF."""
        for conn in list(self.buffers):
            self.drop(conn)

    # ------------------------------------------------------------------ accepting and the gate

    def _on_accept(self, server: object, _mask: int) -> None:
        assert self.server is not None
        try:
            conn, _ = self.server.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            # Out of descriptors (EMFILE, ENFILE) or a caller gone mid-accept: the caller
            # waits in the queue; stop accepting for a moment rather than spin or die.
            self.selector.unregister(self.server)
            self.host.after(ACCEPT_PAUSE_S, self._resume_accept)
            return
        try:
            conn.setblocking(False)
            gate = current().gate(self.server, conn)
        except OSError:
            conn.close()  # a caller gone before we took it
            return
        self.buffers[conn] = bytearray()
        if gate is not None:
            if len(self.gates) >= MAX_UNPROVEN:
                self.drop(next(iter(self.gates)))  # the oldest: strangers must keep coming to crowd anyone out
            self.gates[conn] = gate
            self.host.after(HANDSHAKE_S, lambda: self._expire_gate(conn, gate, 0))
        self.selector.register(conn, selectors.EVENT_READ, self._on_request_data)

    def _expire_gate(self, conn: socket.socket, gate: Gate, steps: int) -> None:
        """A connection that has not proven itself is dropped once a period passed without a
        step of its handshake (a stranger holds a descriptor of ours briefly), but not for time
        the host itself was busy: a step it took meanwhile gives the caller another period."""
        if self.gates.get(conn) is not gate:
            return
        if gate.steps > steps or self._unread(conn):
            self.host.after(HANDSHAKE_S, lambda: self._expire_gate(conn, gate, gate.steps))
            return
        self.drop(conn)

    @staticmethod
    def _unread(conn: socket.socket) -> bool:
        """Bytes wait on `conn` that the host has not read (it was busy): not the caller's delay."""
        try:
            return bool(conn.recv(1, socket.MSG_PEEK))
        except OSError:  # nothing to read now (EAGAIN), or the connection failed
            return False

    def _pass_gate(self, conn: socket.socket, line: bytes) -> None:
        """One line of a connection's handshake; a caller that fails it is dropped unanswered."""
        try:
            reply = self.gates[conn].step(line)
            if reply is not None:
                conn.sendall(reply)  # a few dozen bytes to a fresh connection: never blocks
        except OSError:  # loopback.NotProven among them
            self.drop(conn)
            return
        if self.gates[conn].passed:
            del self.gates[conn]
        self.served(conn)

    def _resume_accept(self) -> None:
        if self.server is not None and not self.host.done:
            self.selector.register(self.server, selectors.EVENT_READ, self._on_accept)

    def drop(self, conn: socket.socket) -> None:
        try:
            self.selector.unregister(conn)
        except (KeyError, ValueError):
            pass
        self.buffers.pop(conn, None)
        self.gates.pop(conn, None)
        conn.close()

    # ------------------------------------------------------------------ framing and serving

    def _on_request_data(self, conn: socket.socket, _mask: int) -> None:
        try:
            # An unproven caller's bytes are read a handshake line at a time: it holds no more of ours.
            chunk = conn.recv(HANDSHAKE_LINE_MAX if conn in self.gates else REQUEST_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.drop(conn)
            return
        buffer = self.buffers[conn]
        buffer.extend(chunk)
        if conn in self.gates and len(buffer) > HANDSHAKE_LINE_MAX and b"\n" not in buffer[:HANDSHAKE_LINE_MAX]:
            self.drop(conn)  # an unproven caller gets no room for anything but a handshake line
            return
        if b"\n" not in buffer:
            if len(buffer) > rpc.MAX_MESSAGE:
                self.reply_error(conn, AgentTtyError(ErrorCode.PROTOCOL_ERROR, "RPC message too large"))
                self.drop(conn)
            return
        self._serve_next(conn)

    def _serve_next(self, conn: socket.socket) -> None:
        """Answer the next whole request line of `conn`. The connection leaves the selector until
        its answer has gone (a wait or a run answers later), so its requests are answered one
        after another, in order; `served` then takes it back for the next one."""
        buffer = self.buffers.get(conn)
        if buffer is None or self.host.done:
            return
        end = buffer.find(b"\n")
        if end < 0:
            return
        if end > rpc.MAX_MESSAGE:
            self.reply_error(conn, AgentTtyError(ErrorCode.PROTOCOL_ERROR, "RPC message too large"))
            self.drop(conn)
            return
        line = bytes(buffer[:end])
        del buffer[: end + 1]
        try:
            self.selector.unregister(conn)
        except (KeyError, ValueError):
            pass
        if conn in self.gates:
            self._pass_gate(conn, line)
            return
        try:
            result = self.host.dispatch(rpc.decode(line), conn)
        except AgentTtyError as err:
            self.reply_error(conn, err)
            self.served(conn)
            return
        except Exception as err:  # noqa: BLE001 - a bug in one request must not end the session
            self.host.log_crash()
            self.reply_error(conn, AgentTtyError(ErrorCode.INTERNAL_ERROR, f"host error: {type(err).__name__}: {err}"))
            self.served(conn)
            return
        if result is not None:
            self.reply(conn, result)
            self.served(conn)

    def served(self, conn: socket.socket) -> None:
        """A request of `conn` has its answer: the connection waits for its next request (a
        caller that sent one request and closes, as every CLI does, is dropped at its EOF)."""
        if self.host.done or conn not in self.buffers or conn.fileno() < 0:
            self.drop(conn)
            return
        if b"\n" in self.buffers[conn]:
            # A request sent before this answer came: answer it on a later loop turn (not by
            # recursion, and after what else is ready). Nothing more is read meanwhile, so a
            # caller's queue holds at most one read past a whole line.
            self.host.after(0, lambda: self._serve_next(conn))
            return
        try:
            conn.setblocking(False)
            self.selector.register(conn, selectors.EVENT_READ, self._on_request_data)
        except (OSError, ValueError, KeyError):
            self.drop(conn)

    # ------------------------------------------------------------------ replies

    def answer(self, conn: socket.socket, result: dict[str, Any]) -> None:
        """A later answer (a wait's, a run's, a streamed input's): the reply, then the next request."""
        self.reply(conn, result)
        self.served(conn)

    def answer_error(self, conn: socket.socket, err: AgentTtyError) -> None:
        self.reply_error(conn, err)
        self.served(conn)

    def reply(self, conn: socket.socket, result: dict[str, Any]) -> None:
        self._send(conn, {"ok": True, "result": result})

    def reply_error(self, conn: socket.socket, err: AgentTtyError) -> None:
        self._send(conn, {"ok": False, "error": {"code": err.code.value, "message": err.message, "details": err.details}})

    def _send(self, conn: socket.socket, message: dict[str, Any]) -> None:
        self.replied = True
        try:
            conn.setblocking(True)
            conn.settimeout(1.0)
            conn.sendall(rpc.encode_reply(message))
        except OSError:
            pass
