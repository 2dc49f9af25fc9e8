"""RPC between the CLI and a session's host: one JSON object a line over a Unix socket.

Request: {"op": "...", ...}. Reply: {"ok": true, "result": {...}} or
{"ok": false, "error": {"code": "...", "message": "..."}}.
"""

from __future__ import annotations

import json
import os
import time
from agent_tty.platform.system import current
from agent_tty.protocol.errors import AgentTtyError, ErrorCode

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command ~2 ms at start-up (issue 26)
    import socket
    from typing import Any, Self

MAX_MESSAGE = 1 << 20
"""The largest request a host reads (what a CLI sends is small: a command, keys, a paste)."""
MAX_REPLY = 64 << 20
"""The largest reply a CLI reads: a structured snapshot of a large screen is several MiB."""
OPS = ("ping", "inspect", "resize", "signal", "destroy", "input", "keys", "run", "wait", "snapshot", "mark")
"""The ops a host serves: host/ops.py's Ops has one handler per op, by the same name."""


def encode(message: dict[str, Any]) -> bytes:
    """One request line. A request the host would refuse as too large is refused here, before
    anything is sent, as the caller's input error (exit 2) that names the limit: sent, the host
    would drop the connection and the caller could only report an unreachable host."""
    line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
    if len(line) - 1 > MAX_MESSAGE:
        raise AgentTtyError(
            ErrorCode.INVALID_INPUT,
            f"the {message.get('op')!r} request is {len(line) - 1} bytes encoded; a host reads at most "
            f"{MAX_MESSAGE} bytes a request (1 MiB): send the text in smaller pieces",
            limit=MAX_MESSAGE,
            size=len(line) - 1,
        )
    return line


def encode_reply(message: dict[str, Any]) -> bytes:
    """One reply line of a host. Replies are bounded by MAX_REPLY, not by the request limit: a
    structured snapshot of the largest screen is ~37 MB. A reply over MAX_REPLY (no screen
    within the size limit gives one) becomes an error reply naming the limit, never a host
    that dies while it answers."""
    line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
    if len(line) - 1 > MAX_REPLY:
        size = len(line) - 1
        error = {"code": ErrorCode.PROTOCOL_ERROR.value, "details": {"limit": MAX_REPLY, "size": size},
                 "message": f"the reply is {size} bytes encoded; a caller reads at most {MAX_REPLY} bytes a reply (64 MiB)"}
        line = json.dumps({"ok": False, "error": error}, separators=(",", ":")).encode() + b"\n"
    return line


def decode(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except ValueError as err:
        raise AgentTtyError(ErrorCode.PROTOCOL_ERROR, f"malformed RPC message: {err}") from None
    if not isinstance(message, dict):
        raise AgentTtyError(ErrorCode.PROTOCOL_ERROR, "malformed RPC message: not an object")
    return message


def _check_peer(sock: socket.socket, socket_path: str, session_id: str | None) -> None:
    """Input goes only to a host of our own user: whoever serves a socket we reach, a process of
    another user never gets a request (and so never our typed text)."""
    system = current()
    uid = system.peer_user(sock)
    if uid is None:
        return  # the socket's folder check (ours, private) is the guard where the kernel has no peer creds
    if uid != system.user():
        raise AgentTtyError(
            ErrorCode.HOST_UNREACHABLE,
            f"the socket {socket_path} is served by uid {uid}, not by us: nothing was sent",
            sessionId=session_id,
        )


CONNECT_RETRY_S = (0.005, 0.2)
"""A host's listen queue is full (many callers, a busy or stopped host): retry from the first
delay, doubling up to the second, until the call's deadline."""


def _connect(socket_path: str, timeout: float | None, session_id: str | None, plain: bool = False) -> socket.socket:
    deadline = None if timeout is None else time.monotonic() + timeout
    delay = CONNECT_RETRY_S[0]
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        try:
            return _connect_once(socket_path, left, session_id, plain)
        except BlockingIOError:
            # EAGAIN: the listen queue is full; the host has not failed, it is behind.
            if left is not None and left <= delay:
                raise AgentTtyError(
                    ErrorCode.HOST_TIMEOUT,
                    f"the host at {socket_path} is busy: its queue of callers stayed full for {timeout:g} s",
                    sessionId=session_id,
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, CONNECT_RETRY_S[1])


def _connect_once(socket_path: str, timeout: float | None, session_id: str | None, plain: bool) -> socket.socket:
    try:
        return current().connect(socket_path, None if timeout is None else max(0.001, timeout), plain=plain)
    except (FileNotFoundError, ConnectionRefusedError, NotADirectoryError) as err:
        raise AgentTtyError(
            ErrorCode.HOST_UNREACHABLE,
            f"no host answers on {socket_path} ({err.strerror or err})",
            sessionId=session_id,
        ) from None
    except PermissionError as err:
        raise AgentTtyError(
            ErrorCode.HOST_UNREACHABLE, f"cannot reach {socket_path}: {err.strerror}", sessionId=session_id
        ) from None
    except TimeoutError:
        raise AgentTtyError(ErrorCode.HOST_TIMEOUT, f"the host at {socket_path} did not accept in time", sessionId=session_id) from None


def call(socket_path: str, request: dict[str, Any], timeout: float | None = 5.0, session_id: str | None = None) -> dict[str, Any]:
    """Send one request and return the reply's result; host errors are raised as AgentTtyError.

    `timeout` None waits for the answer as long as it takes (a wait without a time-out).
    """
    deadline = time.monotonic() + timeout if timeout is not None else None
    data = encode(request)
    # plain: one request needs no more than the C socket; the socket module stays unloaded (issue 26).
    sock = _connect(socket_path, timeout, session_id, plain=True)
    try:
        _check_peer(sock, socket_path, session_id)
        sock.settimeout(None if deadline is None else max(0.001, deadline - time.monotonic()))
        sock.sendall(data)
        data = _read_reply(sock, deadline, request, session_id)
    except TimeoutError:
        raise AgentTtyError(
            ErrorCode.HOST_TIMEOUT, f"the host did not answer {request.get('op')!r} in time", sessionId=session_id
        ) from None
    except (ConnectionResetError, BrokenPipeError):
        data = b""
    finally:
        sock.close()
    return _result(data, session_id)


def _read_reply(sock: socket.socket, deadline: float | None, request: dict[str, Any], session_id: str | None) -> bytes:
    """One reply line; b"" when the host closed (or reset) the connection before any of it."""
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            sock.settimeout(None if deadline is None else max(0.001, deadline - time.monotonic()))
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if chunk.endswith(b"\n"):
                break
            if size > MAX_REPLY:
                raise AgentTtyError(
                    ErrorCode.PROTOCOL_ERROR,
                    f"the host's answer to {request.get('op')!r} is over {MAX_REPLY >> 20} MiB: ask for less (a smaller screen, no cells)",
                    sessionId=session_id,
                )
    except TimeoutError:
        raise AgentTtyError(
            ErrorCode.HOST_TIMEOUT, f"the host did not answer {request.get('op')!r} in time", sessionId=session_id
        ) from None
    except (ConnectionResetError, BrokenPipeError):
        chunks = []
    return b"".join(chunks)


def _result(data: bytes, session_id: str | None) -> dict[str, Any]:
    if not data:
        raise AgentTtyError(
            ErrorCode.HOST_UNREACHABLE, "the host closed the connection without an answer", sessionId=session_id
        )
    if not data.endswith(b"\n"):
        # A reply is one line; without its end it was cut (never parse a part as if whole).
        raise AgentTtyError(
            ErrorCode.PROTOCOL_ERROR, f"the host's answer was cut off after {len(data)} bytes", sessionId=session_id
        )
    reply = decode(data)
    if reply.get("ok") is True and isinstance(reply.get("result"), dict):
        return reply["result"]
    error = reply.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        try:
            code = ErrorCode(error["code"])
        except ValueError:
            code = ErrorCode.PROTOCOL_ERROR
        raise AgentTtyError(code, str(error.get("message", "")), sessionId=session_id, **(error.get("details") or {}))
    raise AgentTtyError(ErrorCode.PROTOCOL_ERROR, "malformed RPC reply", sessionId=session_id)


class Connection:
    """Requests to one session's host, one after another, over one connection (a long-lived
    caller saves the connect and the peer check of each `call`). Not for several threads at once.

    Safe reuse: before each request the connection is checked for EOF without blocking; a
    connection the host closed (it restarted its accept, or ended) is opened again, with the
    same checks, only then, when nothing of the request has been sent. Once any byte of a
    request has gone, a failure is HOST_UNREACHABLE (or HOST_TIMEOUT) as with `call`, and the
    request is never sent again: the host may have executed it. After such a failure the
    connection is closed; the next request opens a new one. `socket_path` is one session's,
    as `call` takes it: checked by its caller (Engine.socket), never a record's raw path.
    """

    def __init__(self, socket_path: str, session_id: str | None = None, timeout: float | None = 5.0) -> None:
        self.socket_path = socket_path
        self.session_id = session_id
        self._sock: socket.socket | None = None
        self._open(timeout)

    def _open(self, timeout: float | None) -> socket.socket:
        sock = _connect(self.socket_path, timeout, self.session_id)
        try:
            _check_peer(sock, self.socket_path, self.session_id)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        return sock

    def _usable(self) -> socket.socket | None:
        """The open connection, or None when the host has closed it (EOF, a reset) or sent
        something no request asked for: then it is closed here."""
        if self._sock is not None and self.idle_and_open():
            return self._sock
        self.close()
        return None

    def idle_and_open(self) -> bool:
        """Nothing to read and no hang-up: the host still holds its end and owes no answer.
        poll, not select, where there is poll: a long-lived client's descriptors may be past
        select's 1024. Windows has no poll, and its select takes socket handles of any value."""
        import select

        if self._sock is None:
            return False
        try:
            if not hasattr(select, "poll"):
                return not select.select([self._sock], [], [], 0)[0]
            poller = select.poll()
            poller.register(self._sock, select.POLLIN | select.POLLPRI)
            return not poller.poll(0)
        except (OSError, ValueError):
            return False

    def request(self, message: dict[str, Any], timeout: float | None = 5.0) -> dict[str, Any]:
        """The reply's result, as `call` returns it; host errors are raised as AgentTtyError."""
        deadline = time.monotonic() + timeout if timeout is not None else None
        data = encode(message)
        sock = self._usable()
        sent = 0
        for attempt in (1, 2):
            if sock is None:
                sock = self._open(None if deadline is None else max(0.001, deadline - time.monotonic()))
            try:
                sock.settimeout(None if deadline is None else max(0.001, deadline - time.monotonic()))
                while sent < len(data):
                    sent += sock.send(data[sent:])
                break
            except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
                self.close()
                if sent == 0 and attempt == 1:
                    sock = None  # closed before any byte of this request: a new connection is safe
                    continue
                raise AgentTtyError(
                    ErrorCode.HOST_UNREACHABLE,
                    f"the host closed the connection while {message.get('op')!r} was being sent: not sent again",
                    sessionId=self.session_id,
                ) from None
            except TimeoutError:
                self.close()
                raise AgentTtyError(
                    ErrorCode.HOST_TIMEOUT, f"the host did not take {message.get('op')!r} in time", sessionId=self.session_id
                ) from None
        try:
            reply = _read_reply(sock, deadline, message, self.session_id)
        except BaseException:
            self.close()  # a late answer would be read as the next request's
            raise
        if not reply.endswith(b"\n"):
            self.close()
        return _result(reply, self.session_id)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    @property
    def closed(self) -> bool:
        return self._sock is None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class ConnectionPool:
    """A long-lived client's kept-open connections: one idle Connection per session's socket.

    A request takes the session's idle connection (or opens one) and gives it back once the
    answer came, so threads never share one; a connection that failed is closed, never kept.
    It holds connections only, nothing a rule is decided on: the caller reads the manifest and
    checks the socket path before each request, as a command does.
    """

    def __init__(self) -> None:
        import threading

        self._idle: dict[tuple[str | None, str], Connection] = {}
        self._lock = threading.Lock()
        _after_fork_reset(self)

    SWEEP_AT = 16
    """Idle connections past which each call first drops those whose host closed them (its
    session ended): a client that outlives many sessions does not keep a socket for each."""
    KEPT_AT_MOST = 64
    """Idle connections kept at most; past it the oldest is closed. A client driving thousands
    of live sessions keeps a bounded share of its descriptors (RLIMIT_NOFILE is often 1024)."""

    def forget_after_fork(self) -> None:
        """In a forked child: the parent's connections are the parent's. Their sockets are closed
        here (the parent's copies stay open) and the lock is new, since another thread of the
        parent may have held it at the fork. Without this a parent and child reading one socket
        swap each other's answers."""
        import threading

        self._lock = threading.Lock()
        idle, self._idle = list(self._idle.values()), {}
        for connection in idle:
            connection.close()

    def call(self, socket_path: str, request: dict[str, Any], timeout: float | None = 5.0, session_id: str | None = None) -> dict[str, Any]:
        key = (session_id, socket_path)
        with self._lock:
            if len(self._idle) > self.SWEEP_AT:
                self._sweep()
            connection = self._idle.pop(key, None)
        if connection is None:
            connection = Connection(socket_path, session_id, timeout)
        try:
            return connection.request(request, timeout)
        finally:
            if not connection.closed:  # an answer (or a host's error answer) came: reusable
                dropped = []
                with self._lock:
                    kept = self._idle.setdefault(key, connection)
                    while len(self._idle) > self.KEPT_AT_MOST:
                        dropped.append(self._idle.pop(next(iter(self._idle))))
                if kept is not connection:
                    connection.close()
                for old in dropped:
                    old.close()

    def _sweep(self) -> None:
        """Called with the lock held."""
        for key, connection in list(self._idle.items()):
            if not connection.idle_and_open():
                del self._idle[key]
                connection.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = list(self._idle.values()), {}
        for connection in idle:
            connection.close()


_POOLS: Any = None
"""Every live ConnectionPool of this process (a WeakSet), for the reset in a forked child."""


def _after_fork_reset(pool: ConnectionPool) -> None:
    global _POOLS
    if _POOLS is None:
        import weakref

        _POOLS = weakref.WeakSet()
        if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
            os.register_at_fork(after_in_child=lambda: [kept.forget_after_fork() for kept in list(_POOLS)])
    _POOLS.add(pool)
