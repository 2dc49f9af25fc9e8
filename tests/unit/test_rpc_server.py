"""The host's RPC server (host/rpc_server.py) on real sockets and a real selector, with a fake
host: framing across partial reads, bad and oversized frames, in-order serving of a kept
connection, a handler's crash, and the loopback gate's refusal of a stranger."""

from __future__ import annotations

import json
import os
import selectors
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_tty.host import rpc_server
from agent_tty.host.rpc_server import HANDSHAKE_LINE_MAX, RpcServer
from agent_tty.platform import loopback
from agent_tty.platform.system import TRANSPORT_ENV
from agent_tty.protocol import rpc
from agent_tty.protocol.errors import AgentTtyError, ErrorCode

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX") or os.name != "posix", reason="a Unix socket host")


class FakeHost:
    """The ServerSide: it records what it was asked, and its timers run when the test says."""

    def __init__(self) -> None:
        self.done = False
        self.timers: list[tuple[float, Callable[[], None]]] = []
        self.requests: list[dict[str, Any]] = []
        self.crashes = 0
        self.handler: Callable[[dict[str, Any], socket.socket], dict[str, Any] | None] = lambda request, _conn: {"echo": request}

    def after(self, delay: float, callback: Callable[[], None]) -> int:
        self.timers.append((delay, callback))
        return len(self.timers)

    def dispatch(self, request: dict[str, Any], conn: socket.socket) -> dict[str, Any] | None:
        self.requests.append(request)
        return self.handler(request, conn)

    def log_crash(self) -> None:
        self.crashes += 1

    def run_timers(self) -> None:
        due, self.timers = self.timers, []
        for _delay, callback in due:
            callback()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[FakeHost, RpcServer, selectors.BaseSelector, str]]:
    host, selector = FakeHost(), selectors.DefaultSelector()
    server = RpcServer(host, selector)
    path = str(tmp_path / "s.sock")
    server.listen(path)
    yield host, server, selector, path
    server.drop_all()
    server.stop_serving()
    selector.close()


def pump(selector: selectors.BaseSelector, turns: int = 5, timeout: float = 0.05) -> None:
    """A few turns of the host's loop: what is ready is handled."""
    for _ in range(turns):
        for key, mask in selector.select(timeout):
            key.data(key.fileobj, mask)


def client(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.settimeout(5)
    return sock


def read_line(sock: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_a_request_cut_into_pieces_is_served_once_whole(served: Any) -> None:
    host, _server, selector, path = served
    with client(path) as sock:
        pump(selector)
        for piece in (b'{"op"', b':"pi', b'ng"}'):
            sock.sendall(piece)
            pump(selector)
            assert host.requests == []
        sock.sendall(b"\n")
        pump(selector)
        assert host.requests == [{"op": "ping"}]
        assert read_line(sock) == rpc.encode_reply({"ok": True, "result": {"echo": {"op": "ping"}}})


def test_a_bad_frame_is_answered_and_the_connection_serves_the_next(served: Any) -> None:
    host, _server, selector, path = served
    with client(path) as sock:
        sock.sendall(b"not json\n")
        pump(selector)
        reply = json.loads(read_line(sock))
        assert reply["ok"] is False and reply["error"]["code"] == ErrorCode.PROTOCOL_ERROR.value
        assert reply["error"]["message"].startswith("malformed RPC message")
        sock.sendall(b"[1]\n")
        pump(selector)
        assert json.loads(read_line(sock))["error"]["message"] == "malformed RPC message: not an object"
        sock.sendall(b'{"op":"ping"}\n')
        pump(selector)
        assert json.loads(read_line(sock)) == {"ok": True, "result": {"echo": {"op": "ping"}}}
    assert host.requests == [{"op": "ping"}]


def test_a_frame_past_the_limit_is_refused_and_dropped(served: Any) -> None:
    host, server, selector, path = served
    with client(path) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
        sent = 0
        while sent <= rpc.MAX_MESSAGE:
            sock.sendall(b"x" * 65536)
            sent += 65536
            pump(selector, turns=1, timeout=0)
        pump(selector)
        reply = json.loads(read_line(sock))
        assert reply == {"ok": False, "error": {"code": "PROTOCOL_ERROR", "message": "RPC message too large", "details": {}}}
        assert read_line(sock) == b""  # dropped
    assert host.requests == [] and server.buffers == {}


def test_requests_of_a_kept_connection_are_answered_in_order(served: Any) -> None:
    host, server, selector, path = served
    kept: list[socket.socket] = []

    def handler(request: dict[str, Any], conn: socket.socket) -> dict[str, Any] | None:
        if request["op"] == "wait":
            kept.append(conn)
            return None  # answered later, as a wait is
        return {"n": request["n"]}

    host.handler = handler
    with client(path) as sock:
        sock.sendall(b'{"op":"wait","n":1}\n{"op":"ping","n":2}\n')
        pump(selector)
        assert [r["n"] for r in host.requests] == [1]  # the second waits for the first's answer
        server.answer(kept[0], {"n": 1})
        assert host.timers and [r["n"] for r in host.requests] == [1]  # not by recursion
        host.run_timers()
        assert [r["n"] for r in host.requests] == [1, 2]
        replies = read_line(sock)
        if replies.count(b"\n") < 2:
            replies += read_line(sock)
        assert replies == rpc.encode_reply({"ok": True, "result": {"n": 1}}) + rpc.encode_reply({"ok": True, "result": {"n": 2}})


def test_a_handler_that_crashes_gets_an_internal_error_and_the_host_serves_on(served: Any) -> None:
    host, _server, selector, path = served

    def handler(request: dict[str, Any], _conn: socket.socket) -> dict[str, Any] | None:
        if request["op"] == "boom":
            raise ValueError("a bug")
        if request["op"] == "refuse":
            raise AgentTtyError(ErrorCode.SESSION_NOT_RUNNING, "session s is exited", status="exited")
        return {}

    host.handler = handler
    with client(path) as sock:
        sock.sendall(b'{"op":"boom"}\n')
        pump(selector)
        assert json.loads(read_line(sock)) == {
            "ok": False, "error": {"code": "INTERNAL_ERROR", "message": "host error: ValueError: a bug", "details": {}},
        }
        assert host.crashes == 1
        sock.sendall(b'{"op":"refuse"}\n')
        pump(selector)
        assert json.loads(read_line(sock)) == {
            "ok": False,
            "error": {"code": "SESSION_NOT_RUNNING", "message": "session s is exited", "details": {"status": "exited"}},
        }
        assert host.crashes == 1


def test_a_done_host_drops_a_connection_instead_of_serving_it_again(served: Any) -> None:
    host, server, selector, path = served
    with client(path) as sock:
        sock.sendall(b'{"op":"ping"}\n')
        pump(selector)
        assert json.loads(read_line(sock))["ok"] is True
        [conn] = server.buffers
        host.done = True
        server.served(conn)  # an answer that went out as the host ended
        assert server.buffers == {}
        assert read_line(sock) == b""


@pytest.fixture
def gated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeHost, RpcServer, selectors.BaseSelector, loopback.Address]]:
    monkeypatch.setenv(TRANSPORT_ENV, "loopback")
    host, selector = FakeHost(), selectors.DefaultSelector()
    server = RpcServer(host, selector)
    path = tmp_path / "s.sock"
    server.listen(str(path))
    yield host, server, selector, loopback.Address.decode(path.read_bytes())
    server.drop_all()
    server.stop_serving()
    selector.close()


def _tcp(address: loopback.Address) -> socket.socket:
    sock = socket.create_connection((loopback.HOST, address.port), timeout=5)
    return sock


def test_a_caller_that_proves_the_secret_is_served(gated: Any) -> None:
    host, server, selector, address = gated
    with _tcp(address) as sock:
        pump(selector)
        nonce = os.urandom(loopback.NONCE_BYTES).hex().encode()
        sock.sendall(loopback.PROTOCOL + b" " + nonce + b"\n")
        pump(selector)
        host_nonce, _, proof = read_line(sock).rstrip(b"\n").partition(b" ")
        assert proof == loopback._proof(address.secret, b"host", nonce, host_nonce)
        sock.sendall(loopback._proof(address.secret, b"caller", nonce, host_nonce) + b"\n" + b'{"op":"ping"}\n')
        pump(selector)
        host.run_timers()  # the request that came with the proof is served on a later turn
        pump(selector)
        assert host.requests == [{"op": "ping"}] and server.gates == {}
        assert read_line(sock) == rpc.encode_reply({"ok": True, "result": {"echo": {"op": "ping"}}})


@pytest.mark.parametrize("hello", [b"GET / HTTP/1.0\n", loopback.PROTOCOL + b" " + b"00" * loopback.NONCE_BYTES + b"\nwrong\n"])
def test_a_stranger_is_dropped_unanswered(gated: Any, hello: bytes) -> None:
    host, server, selector, address = gated
    with _tcp(address) as sock:
        pump(selector)
        sock.sendall(hello)
        pump(selector)
        host.run_timers()
        pump(selector)
        answer = read_line(sock)
        if b"wrong" in hello:
            answer = read_line(sock)  # past the host's half of the handshake
        assert answer == b""
    assert host.requests == [] and server.gates == {} and server.buffers == {}


def test_an_unproven_caller_gets_no_room_past_a_handshake_line(gated: Any) -> None:
    host, server, selector, address = gated
    with _tcp(address) as sock:
        pump(selector)
        sock.sendall(b"x" * (HANDSHAKE_LINE_MAX + 1))
        pump(selector)
        assert read_line(sock) == b""
    assert server.buffers == {} and host.requests == []


def test_a_silent_stranger_is_dropped_after_a_period(gated: Any) -> None:
    host, server, selector, address = gated
    with _tcp(address) as sock:
        pump(selector)
        assert len(server.gates) == 1
        [(delay, expire)] = host.timers
        assert delay == rpc_server.HANDSHAKE_S
        host.timers.clear()
        expire()
        assert server.gates == {} and server.buffers == {}
        assert read_line(sock) == b""
