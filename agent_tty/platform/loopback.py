"""The host's transport where a Unix socket is not to be had (Windows): a loopback TCP port,
usable only by whoever can read the session's secret, served by a host that proves it holds
that secret before a caller sends it anything.

A loopback port, unlike a Unix socket in a private folder, is open to every local user, and a
port a dead host let go may be taken by anyone. So both ends prove themselves, and the secret
never crosses the wire (docs/adr/0021-loopback-transport.md):

    caller -> host   PROTOCOL <caller nonce>
    host -> caller   <host nonce> <HMAC(secret, "host" caller-nonce host-nonce)>
    caller -> host   <HMAC(secret, "caller" caller-nonce host-nonce)>     then requests, as on a Unix socket

The caller sends a request only to a host that answered with the first proof (a stranger on a
recycled port cannot, and learns nothing it could replay: each proof binds both nonces); the
host reads a request only after the second. The address file, `<socket folder>/<id>.sock`,
holds the port and the secret. It is written as the socket would be: in the session's private
socket folder, readable by the user alone; on POSIX a caller reads it without following a link
and only when it is its own user's (Windows has neither check: docs/adr/0021).
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import secrets
import socket
import stat
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_tty.platform.system import current

if TYPE_CHECKING:
    from agent_tty.platform.access import UserId

PROTOCOL = b"agent-tty-loopback/1"
HOST = "127.0.0.1"
SECRET_BYTES = 32
NONCE_BYTES = 16
MAX_ADDRESS_FILE = 512
MAX_HANDSHAKE_LINE = 256
"""The host's handshake line is under 100 bytes."""
HANDSHAKE_LIMIT_S = 5.0
"""The whole handshake, whatever the call's own time-out (none for a `wait`): a stranger on a
recycled port that trickles bytes cannot hold a caller longer."""


class NotProven(ConnectionRefusedError):
    """The other end did not prove it holds the session's secret: nothing was sent to it."""

    def __init__(self, why: str) -> None:
        super().__init__(errno.ECONNREFUSED, why)


@dataclass(frozen=True)
class Address:
    port: int
    secret: bytes

    def encode(self) -> bytes:
        return json.dumps({"version": 1, "port": self.port, "secret": self.secret.hex()}).encode()

    @classmethod
    def decode(cls, data: bytes) -> Address:
        try:
            record = json.loads(data)
            port, secret = record["port"], bytes.fromhex(record["secret"])
            ok = record.get("version") == 1 and type(port) is int and 0 < port < 65536 and len(secret) == SECRET_BYTES
        except (ValueError, KeyError, TypeError, AttributeError):
            ok = False
        if not ok:
            raise NotProven("its address file is not one a host of ours wrote")
        return cls(port, secret)


def _proof(secret: bytes, who: bytes, caller_nonce: bytes, host_nonce: bytes) -> bytes:
    return hmac.new(secret, who + b" " + caller_nonce + b" " + host_nonce, hashlib.sha256).hexdigest().encode()


# ---------------------------------------------------------------- the host's end


class Server(socket.socket):
    """A listening loopback socket that knows the secret its callers must prove."""

    __slots__ = ("secret",)


def listen(path: str, backlog: int) -> Server:
    """Bind a free loopback port and publish it with a new secret at `path` (a path in a
    private folder of ours that trusted_socket_path checked), replacing what was there."""
    server = Server(socket.AF_INET, socket.SOCK_STREAM)
    try:
        server.secret = secrets.token_bytes(SECRET_BYTES)
        exclusive = getattr(socket, "SO_EXCLUSIVEADDRUSE", None)  # Windows: no other socket may bind it too
        if exclusive is not None:
            server.setsockopt(socket.SOL_SOCKET, exclusive, 1)
        server.bind((HOST, 0))
        server.listen(backlog)
        server.setblocking(False)
        _publish(path, Address(server.getsockname()[1], server.secret))
    except BaseException:
        server.close()
        raise
    return server


def _publish(path: str, address: Address) -> None:
    """Written whole under a new name, then renamed: a caller never reads half of it."""
    from agent_tty.storage import fs

    partial = f"{path}.{secrets.token_hex(6)}.partial"
    fd = fs.open_file(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        try:
            os.write(fd, address.encode())
        finally:
            os.close(fd)
        fs.replace(partial, path)
    except BaseException:
        try:
            os.unlink(partial)
        except OSError:
            pass
        raise


class Gate:
    """The host's side of one connection's handshake: feed it whole lines until `passed`."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret
        self._caller_nonce: bytes | None = None
        self._host_nonce = secrets.token_hex(NONCE_BYTES).encode()
        self.passed = False
        self.steps = 0
        """Lines taken so far (the host gives a caller that makes progress more time)."""

    def step(self, line: bytes) -> bytes | None:
        """The reply to send for `line`, or None once the caller has proven itself. NotProven
        when the line is not the next step: drop the connection without a word."""
        self.steps += 1
        if self._caller_nonce is None:
            protocol, _, nonce = line.partition(b" ")
            if protocol != PROTOCOL or len(nonce) != 2 * NONCE_BYTES or not _is_hex(nonce):
                raise NotProven("the caller did not open the handshake")
            self._caller_nonce = nonce
            return self._host_nonce + b" " + _proof(self._secret, b"host", nonce, self._host_nonce) + b"\n"
        expected = _proof(self._secret, b"caller", self._caller_nonce, self._host_nonce)
        if not hmac.compare_digest(line, expected):
            raise NotProven("the caller does not hold the session's secret")
        self.passed = True
        return None


def gate_for(server: socket.socket, conn: socket.socket) -> Gate | None:
    """The handshake a connection accepted on `server` must pass; None on a Unix socket."""
    secret = getattr(server, "secret", None)
    if secret is None:
        return None
    try:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # small lines, answered at once
    except OSError:
        pass  # a caller gone already (macOS: EINVAL once reset); its gate fails on the first read
    return Gate(secret)


def _is_hex(value: bytes) -> bool:
    return all(c in b"0123456789abcdef" for c in value)


# ---------------------------------------------------------------- a caller's end


def is_address_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def read_address(path: str, owner: UserId | None) -> Address:
    """The address a host published at `path`: a regular file, not a link, of at most
    MAX_ADDRESS_FILE bytes, and `owner`'s (None: not checked)."""
    from agent_tty.storage import fs

    try:
        fd = fs.open_file(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, PermissionError):
        raise  # no host yet (or any more); a folder we may not enter
    except OSError as err:  # a link (ELOOP), a folder, ...
        raise NotProven(f"cannot read its address file ({err.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ADDRESS_FILE:
            raise NotProven("its address file is not a small regular file")
        found = current().fd_owner(fd, info) if owner is not None else None
        if found != owner:
            raise PermissionError(errno.EACCES, f"its address file belongs to {_named(found)}, not to us")
        data = os.read(fd, MAX_ADDRESS_FILE + 1)
    finally:
        os.close(fd)
    return Address.decode(data)


def _named(user: UserId | None) -> str:
    return f"uid {user}" if isinstance(user, int) else f"SID {user}"


def connect(path: str, timeout: float | None, owner: UserId | None) -> socket.socket:
    """A connection to the host that published `path`, once it has proven itself and we have.

    FileNotFoundError and PermissionError as the address file gives them, TimeoutError when
    the host did not answer within `timeout` (or HANDSHAKE_LIMIT_S), NotProven for the rest:
    whatever else fails (a port nobody serves, no loopback in this network namespace, a reset),
    nothing was sent to anyone."""
    address = read_address(path, owner)
    limit = HANDSHAKE_LIMIT_S if timeout is None else min(timeout, HANDSHAKE_LIMIT_S)
    deadline = time.monotonic() + limit
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.settimeout(limit)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.connect((HOST, address.port))
        caller_nonce = secrets.token_hex(NONCE_BYTES).encode()
        sock.sendall(PROTOCOL + b" " + caller_nonce + b"\n")
        host_nonce, _, proof = _read_line(sock, deadline).partition(b" ")
        if not hmac.compare_digest(proof, _proof(address.secret, b"host", caller_nonce, host_nonce)):
            raise NotProven(f"the process on {HOST}:{address.port} did not prove it is this session's host")
        sock.sendall(_proof(address.secret, b"caller", caller_nonce, host_nonce) + b"\n")
        sock.settimeout(timeout)
    except (TimeoutError, NotProven):
        sock.close()
        raise
    except OSError as err:
        sock.close()
        raise NotProven(f"{HOST}:{address.port}: {err.strerror or err}") from None
    except BaseException:
        sock.close()
        raise
    return sock


def _read_line(sock: socket.socket, deadline: float) -> bytes:
    """The host's handshake line, by `deadline`. It sends nothing more until our proof has
    reached it, so bytes past the line mean it is not speaking the handshake."""
    line = bytearray()
    while len(line) <= MAX_HANDSHAKE_LINE:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the host's handshake took too long")
        sock.settimeout(left)
        chunk = sock.recv(MAX_HANDSHAKE_LINE + 1)
        if not chunk:
            raise NotProven("the host closed the connection during the handshake")
        line += chunk
        if line.endswith(b"\n") and line.count(b"\n") == 1:
            return bytes(line[:-1])
        if b"\n" in line:
            break
    raise NotProven("the host's handshake line is not one line of proof")
