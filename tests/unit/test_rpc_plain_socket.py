"""A CLI command's one request to a host goes over a plain `_socket.socket` (connect's `plain`,
docs/adr/0036): it must carry the request and prove the peer's uid as a `socket.socket` does."""

from __future__ import annotations

import _socket
import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from agent_tty.platform.system import current
from agent_tty.protocol import rpc

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets")


def _serve_once(path: str, answer: bytes) -> tuple[socket.socket, threading.Thread, list[bytes]]:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    got: list[bytes] = []

    def host() -> None:
        conn, _ = server.accept()
        with conn:
            got.append(conn.makefile("rb").readline())
            conn.sendall(answer)

    thread = threading.Thread(target=host)
    thread.start()
    return server, thread, got


def test_a_plain_socket_proves_its_peer_as_a_socket_module_one_does(tmp_path: Path) -> None:
    path = str(tmp_path / "h.sock")
    server, thread, _got = _serve_once(path, b'{"ok":true,"result":{}}\n')
    try:
        sock = current().connect(path, 5, plain=True)
        try:
            assert type(sock) is _socket.socket and sock.family == socket.AF_UNIX
            assert current().peer_user(sock) == os.geteuid()
            sock.sendall(b"x\n")
            assert sock.recv(100).endswith(b"\n")
        finally:
            sock.close()
        thread.join(5)
    finally:
        server.close()


def test_a_call_goes_over_a_plain_socket(tmp_path: Path) -> None:
    path = str(tmp_path / "h.sock")
    server, thread, got = _serve_once(path, b'{"ok":true,"result":{"pong":1}}\n')
    try:
        assert rpc.call(path, {"op": "ping"}, timeout=5) == {"pong": 1}
        thread.join(5)
    finally:
        server.close()
    assert got == [b'{"op":"ping"}\n']


def test_connect_without_plain_is_still_a_socket_module_socket(tmp_path: Path) -> None:
    """Its contract for the kept-open connections and callers that use `with` or makefile."""
    path = str(tmp_path / "h.sock")
    server, thread, _got = _serve_once(path, b"{}\n")
    try:
        with current().connect(path, 5) as sock:
            assert isinstance(sock, socket.socket)
            sock.sendall(b"x\n")
            assert sock.makefile("rb").readline() == b"{}\n"
        thread.join(5)
    finally:
        server.close()
