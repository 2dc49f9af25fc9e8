"""The loopback transport's handshake and address file (platform/loopback.py), on real sockets.

Windows's hosts serve it; on Linux a host serves it under AGENT_TTY_TRANSPORT=loopback, which is
how tests/integration/test_loopback_transport.py and a whole pinned pass (scripts/test) run it.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from agent_tty.platform import loopback
from agent_tty.platform.system import TRANSPORT_ENV, current

OWNER = os.geteuid() if hasattr(os, "geteuid") else None
"""Who must own an address file: this user on POSIX; on Windows the kernel's st_uid says nothing."""
POSIX_ONLY = pytest.mark.skipif(OWNER is None, reason="owners, links and FIFOs as POSIX has them")


def _address_file(tmp_path: Path, port: int, secret: bytes) -> str:
    path = tmp_path / "s.sock"
    path.write_bytes(loopback.Address(port, secret).encode())
    path.chmod(0o600)
    return str(path)


def _serve_gate(server: socket.socket, secret: bytes, got: list[bytes]) -> None:
    """A minimal host: one connection, the gate, then it records the first request line."""
    conn, _ = server.accept()
    with conn:
        gate = loopback.Gate(secret)
        reader = conn.makefile("rb")
        try:
            while not gate.passed:
                reply = gate.step(reader.readline().rstrip(b"\n"))
                if reply:
                    conn.sendall(reply)
        except loopback.NotProven:
            got.append(b"refused")
            return
        got.append(reader.readline())


def _listener() -> socket.socket:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    return server


def test_a_caller_with_the_secret_reaches_a_host_with_it(tmp_path: Path) -> None:
    secret = os.urandom(loopback.SECRET_BYTES)
    got: list[bytes] = []
    with _listener() as server:
        thread = threading.Thread(target=_serve_gate, args=(server, secret, got))
        thread.start()
        path = _address_file(tmp_path, server.getsockname()[1], secret)
        with loopback.connect(path, 5, OWNER) as sock:
            sock.sendall(b'{"op":"ping"}\n')
        thread.join(5)
    assert got == [b'{"op":"ping"}\n']


def test_a_stranger_on_the_port_gets_nothing_but_a_nonce(tmp_path: Path) -> None:
    """The host died and another process took its port: it cannot prove the secret, so the
    caller sends it no request (and the hello line carries nothing it can replay)."""
    secret = os.urandom(loopback.SECRET_BYTES)
    received = bytearray()

    def impostor(server: socket.socket) -> None:
        conn, _ = server.accept()
        with conn:
            conn.settimeout(5)
            received.extend(conn.recv(4096))
            conn.sendall(b"0" * 32 + b" " + b"f" * 64 + b"\n")  # a guess at a proof
            try:
                while chunk := conn.recv(4096):
                    received.extend(chunk)
            except OSError:
                pass

    with _listener() as server:
        thread = threading.Thread(target=impostor, args=(server,))
        thread.start()
        path = _address_file(tmp_path, server.getsockname()[1], secret)
        with pytest.raises(loopback.NotProven, match="did not prove"):
            loopback.connect(path, 5, OWNER)
        thread.join(5)
    assert received.startswith(loopback.PROTOCOL + b" ")
    assert received.count(b"\n") == 1, received  # the hello line only: no proof, no request
    assert secret.hex().encode() not in received


def test_a_caller_without_the_secret_is_refused_before_any_request(tmp_path: Path) -> None:
    secret = os.urandom(loopback.SECRET_BYTES)
    got: list[bytes] = []
    with _listener() as server:
        thread = threading.Thread(target=_serve_gate, args=(server, secret, got))
        thread.start()
        # The caller read an address file with another secret (say, an old host's).
        path = _address_file(tmp_path, server.getsockname()[1], os.urandom(loopback.SECRET_BYTES))
        with pytest.raises(loopback.NotProven):
            loopback.connect(path, 5, OWNER)
        thread.join(5)
    assert got == [b"refused"]


def test_the_gate_takes_only_its_own_handshake() -> None:
    secret = os.urandom(loopback.SECRET_BYTES)
    with pytest.raises(loopback.NotProven):
        loopback.Gate(secret).step(b'{"op":"destroy"}')  # a request before any handshake
    with pytest.raises(loopback.NotProven):
        loopback.Gate(secret).step(loopback.PROTOCOL + b" not-a-nonce")
    # A caller's proof for one connection does not open another (each binds both nonces).
    first, second = loopback.Gate(secret), loopback.Gate(secret)
    nonce = b"ab" * loopback.NONCE_BYTES
    host_nonce = first.step(loopback.PROTOCOL + b" " + nonce).split(b" ")[0]
    second.step(loopback.PROTOCOL + b" " + nonce)
    proof = loopback._proof(secret, b"caller", nonce, host_nonce)
    with pytest.raises(loopback.NotProven):
        second.step(proof)
    assert first.step(proof) is None and first.passed
    # The host's proof is not the caller's: an impostor cannot reflect one as the other.
    with pytest.raises(loopback.NotProven):
        third = loopback.Gate(secret)
        third_nonce = third.step(loopback.PROTOCOL + b" " + nonce).split(b" ")[0]
        third.step(loopback._proof(secret, b"host", nonce, third_nonce))


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"[]",
        b'{"version": 2, "port": 1000, "secret": "' + b"00" * 32 + b'"}',
        b'{"version": 1, "port": 0, "secret": "' + b"00" * 32 + b'"}',
        b'{"version": 1, "port": 70000, "secret": "' + b"00" * 32 + b'"}',
        b'{"version": 1, "port": true, "secret": "' + b"00" * 32 + b'"}',
        b'{"version": 1, "port": 1000, "secret": "00"}',
        b'{"version": 1, "port": 1000, "secret": "zz"}',
    ],
    ids=["empty", "text", "list", "version", "port0", "port-high", "port-bool", "short-secret", "not-hex"],
)
def test_a_bad_address_file_is_refused_with_a_reason(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "s.sock"
    path.write_bytes(content)
    with pytest.raises(loopback.NotProven, match="address file"):
        loopback.read_address(str(path), OWNER)


@POSIX_ONLY
def test_the_address_file_is_read_only_as_a_small_regular_file_of_ours(tmp_path: Path) -> None:
    real = _address_file(tmp_path, 1000, os.urandom(loopback.SECRET_BYTES))
    assert loopback.read_address(real, OWNER).port == 1000
    link = tmp_path / "link.sock"
    link.symlink_to(real)
    with pytest.raises(loopback.NotProven, match="cannot read"):  # O_NOFOLLOW: ELOOP
        loopback.read_address(str(link), OWNER)
    assert not loopback.is_address_file(str(link))
    with pytest.raises(PermissionError, match="belongs to uid"):
        loopback.read_address(real, OWNER + 1)
    big = tmp_path / "big.sock"
    big.write_bytes(b" " * (loopback.MAX_ADDRESS_FILE + 1))
    with pytest.raises(loopback.NotProven, match="small regular file"):
        loopback.read_address(str(big), OWNER)
    fifo = tmp_path / "fifo.sock"
    os.mkfifo(fifo)
    with pytest.raises(loopback.NotProven, match="small regular file"):
        loopback.read_address(str(fifo), OWNER)  # O_NONBLOCK: no hang on a fifo


def test_listen_publishes_a_private_address_and_replaces_an_old_one(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sock")
    Path(path).write_bytes(b"an old host's address")
    server = loopback.listen(path, 8)
    try:
        address = loopback.read_address(path, OWNER)
        assert address.port == server.getsockname()[1] and address.secret == server.secret
        assert server.getsockname()[0] == "127.0.0.1"
        if OWNER is not None:
            assert os.stat(path).st_mode & 0o777 == 0o600
        assert sorted(os.listdir(tmp_path)) == ["s.sock"]  # no partial file left
    finally:
        server.close()


def test_the_systems_transport_serves_and_reaches_a_loopback_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a host and a caller do through agent_tty.platform.system (Windows's only transport;
    here under AGENT_TTY_TRANSPORT=loopback), the gate as the host's loop runs it."""
    monkeypatch.setenv(TRANSPORT_ENV, "loopback")
    system = current()
    assert system.transport() == "loopback"
    path = str(tmp_path / "s.sock")
    server = system.listen(path)
    got: list[bytes] = []

    def host() -> None:
        server.setblocking(True)
        conn, _ = server.accept()
        with conn:
            gate = system.gate(server, conn)
            reader = conn.makefile("rb")
            while not gate.passed:
                reply = gate.step(reader.readline().rstrip(b"\n"))
                if reply:
                    conn.sendall(reply)
            got.append(reader.readline())
            conn.sendall(b"answer\n")

    thread = threading.Thread(target=host)
    thread.start()
    try:
        with system.connect(path, 5) as sock:
            assert system.peer_user(sock) is None  # a port names no user: the handshake is the guard
            sock.sendall(b"request\n")
            assert sock.makefile("rb").readline() == b"answer\n"
        thread.join(5)
    finally:
        server.close()
    assert got == [b"request\n"]


def test_a_port_nobody_serves_reads_as_no_host(tmp_path: Path) -> None:
    with _listener() as server:
        port = server.getsockname()[1]
    path = _address_file(tmp_path, port, os.urandom(loopback.SECRET_BYTES))  # its host is gone
    with pytest.raises(loopback.NotProven, match=f"127.0.0.1:{port}"):
        loopback.connect(path, 5, OWNER)


def test_a_stranger_that_trickles_its_answer_cannot_hold_a_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One byte at a time, each within the socket's time-out: the handshake's own deadline
    ends it, also for a call that has no time-out of its own (a `wait` without one)."""
    monkeypatch.setattr(loopback, "HANDSHAKE_LIMIT_S", 1.0)
    stop = threading.Event()

    def trickle(server: socket.socket) -> None:
        conn, _ = server.accept()
        with conn:
            while not stop.is_set():
                try:
                    conn.sendall(b"0")
                except OSError:
                    return
                stop.wait(0.1)

    with _listener() as server:
        thread = threading.Thread(target=trickle, args=(server,))
        thread.start()
        path = _address_file(tmp_path, server.getsockname()[1], os.urandom(loopback.SECRET_BYTES))
        started = time.monotonic()
        try:
            with pytest.raises((TimeoutError, loopback.NotProven)):
                loopback.connect(path, None, OWNER)
        finally:
            stop.set()
            thread.join(5)
    assert time.monotonic() - started < 3
