"""The loopback transport (Windows's: CPython there has no AF_UNIX) on real hosts, served here
under AGENT_TTY_TRANSPORT=loopback. A loopback port is open to every local user and may be taken
by anyone once its host is gone: these tests are the strangers (docs/adr/0021)."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import threading
import time
from pathlib import Path

import pytest

from agent_tty.host.rpc_server import HANDSHAKE_S
from agent_tty.platform import loopback
from tests.conftest import Cli, pid_alive, wait_until

pytestmark = pytest.mark.integration

LOOPBACK = {"AGENT_TTY_TRANSPORT": "loopback"}


@pytest.fixture
def loop(cli: Cli) -> Cli:
    """The CLI, with every host it starts serving a loopback port."""
    original = cli.env
    cli.env = lambda extra=None: original({**LOOPBACK, **(extra or {})})  # type: ignore[method-assign]
    return cli


def _port(cli: Cli, sid: str) -> int:
    return int(json.loads(Path(cli.manifest(sid)["socketPath"]).read_bytes())["port"])


def _stranger(port: int, send: bytes, read_for: float = 3.0) -> bytes:
    """Connect as someone without the secret, send `send`, and return what came back until the
    host closed the connection (b"" when it said nothing)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        if send:
            sock.sendall(send)
        sock.settimeout(read_for)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def test_a_session_runs_whole_over_a_loopback_port(loop: Cli) -> None:
    sid = loop.create("bash", options=("--cols", "60"))["sessionId"]
    address = Path(loop.manifest(sid)["socketPath"])
    info = address.lstat()
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600, oct(info.st_mode)
    assert stat.S_IMODE(address.parent.lstat().st_mode) == 0o700
    assert loop.run("wait", sid, "--idle-ms", "300", "--timeout", "10s").result["matched"] is True  # the prompt drawn
    ran = loop.run("run", sid, "--", "echo over-$((20+22))")
    assert ran.code == 0 and ran.result["output"].endswith("over-42\n"), ran.stdout
    assert loop.run("type", sid, "echo typed").code == 0
    assert loop.run("send-keys", sid, "Enter").code == 0
    assert loop.run("wait", sid, "--text", "typed\n", "--timeout", "10s").result["matched"] is True
    assert "over-42" in loop.run("snapshot", sid, json_out=False).stdout
    assert loop.run("inspect", sid).result["status"] == "running"
    # A caller that does not set the variable follows what the host serves.
    plain = loop.run("snapshot", sid, json_out=False, env={"AGENT_TTY_TRANSPORT": ""})
    assert plain.code == 0 and "over-42" in plain.stdout, plain.stderr
    assert loop.run("destroy", sid).code == 0
    assert not address.exists()


def test_a_request_without_the_handshake_is_dropped_unanswered(loop: Cli) -> None:
    sid = loop.create("cat")["sessionId"]
    port = _port(loop, sid)
    for attempt in (
        b'{"op":"destroy"}\n',
        b'{"op":"input","data":"stranger-was-here\\r"}\n',
        loopback.PROTOCOL + b" " + b"ab" * loopback.NONCE_BYTES + b"\n" + b"0" * 64 + b'\n{"op":"destroy"}\n',
    ):
        answer = _stranger(port, attempt)
        # Nothing but, for the last, the host's own half of the handshake (its nonce and proof).
        assert answer == b"" or (answer.count(b"\n") == 1 and len(answer) < 200), answer
        assert b"ok" not in answer
    assert loop.run("inspect", sid).result["status"] == "running"
    assert "stranger-was-here" not in loop.run("snapshot", sid, json_out=False).stdout
    events = (loop.folder(sid) / "events.jsonl").read_text()
    assert "stranger" not in events


def test_a_silent_stranger_is_dropped_and_holds_up_no_one(loop: Cli) -> None:
    sid = loop.create("cat")["sessionId"]
    port = _port(loop, sid)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        started = time.monotonic()
        assert loop.run("type", sid, "meanwhile").code == 0  # the host serves others meanwhile
        sock.settimeout(15)
        assert sock.recv(1) == b""  # then it drops the connection that never proved itself
        held = time.monotonic() - started
    assert held < 10, held
    assert loop.run("wait", sid, "--text", "meanwhile", "--timeout", "10s").result["matched"] is True


def test_whoever_takes_a_dead_hosts_port_gets_no_request(loop: Cli) -> None:
    """The host is killed, its address file stays, and a stranger binds the port it named: a
    caller that reads the stale file reaches the stranger, which cannot prove the secret, so
    the caller's typed text never leaves it."""
    created = loop.create("cat")
    sid, host = created["sessionId"], created["hostPid"]
    port = _port(loop, sid)
    os.kill(host, signal.SIGKILL)  # the host this test started
    wait_until(lambda: not pid_alive(host), what="the host to end")
    received = bytearray()
    accepted = threading.Event()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as impostor:
        impostor.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        impostor.bind(("127.0.0.1", port))
        impostor.listen(8)

        def serve() -> None:
            impostor.settimeout(20)
            try:
                while True:
                    conn, _ = impostor.accept()
                    accepted.set()
                    with conn:
                        conn.settimeout(5)
                        received.extend(conn.recv(4096))
                        conn.sendall(b"0" * 32 + b" " + b"e" * 64 + b"\n")
                        try:
                            while chunk := conn.recv(4096):
                                received.extend(chunk)
                        except OSError:
                            pass
            except OSError:
                return

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        typed = loop.run("type", sid, "typed-for-the-host")
        assert typed.code != 0, typed.stdout
        assert typed.error["code"] in ("HOST_UNREACHABLE", "SESSION_NOT_RUNNING"), typed.stdout
        assert accepted.is_set(), "the caller never reached the port: the test proved nothing"
    assert b"typed-for-the-host" not in received
    assert received.count(b"\n") <= 1 and received.startswith(loopback.PROTOCOL), bytes(received)


def test_a_host_that_stalled_mid_handshake_still_lets_its_caller_in(loop: Cli) -> None:
    """The host is stopped between accepting a caller and reading its hello for longer than a
    stranger may take: the caller's step, read on the same loop turn as the expiry, gives it
    another period (without that, the host dropped it with its request unread)."""
    created = loop.create("cat")
    sid, host = created["sessionId"], created["hostPid"]
    address = loopback.Address.decode(Path(loop.manifest(sid)["socketPath"]).read_bytes())
    assert loop.run("snapshot", sid).code == 0  # the host's screen is built: its loop only waits
    with socket.create_connection(("127.0.0.1", address.port), timeout=10) as sock:
        time.sleep(0.5)  # the host accepts it and arms the expiry
        os.kill(host, signal.SIGSTOP)  # the host this test started
        try:
            nonce = b"cd" * loopback.NONCE_BYTES
            sock.sendall(loopback.PROTOCOL + b" " + nonce + b"\n")
            time.sleep(HANDSHAKE_S + 0.5)
        finally:
            os.kill(host, signal.SIGCONT)
        reader = sock.makefile("rb")
        host_nonce, _, proof = reader.readline().rstrip(b"\n").partition(b" ")
        assert proof == loopback._proof(address.secret, b"host", nonce, host_nonce)
        sock.sendall(loopback._proof(address.secret, b"caller", nonce, host_nonce) + b"\n" + b'{"op":"ping"}\n')
        answer = json.loads(reader.readline())
    assert answer["ok"] is True and answer["result"]["sessionId"] == sid, answer


def test_a_crowd_of_strangers_holds_a_bounded_share_of_the_host(loop: Cli) -> None:
    """Strangers flood the port with hellos and junk: the host keeps at most MAX_UNPROVEN of
    them (the oldest go first), each with at most a line's worth of its memory, and serves its
    own callers meanwhile."""
    from agent_tty.host.rpc_server import MAX_UNPROVEN

    created = loop.create("cat")
    sid, host = created["sessionId"], created["hostPid"]
    port = _port(loop, sid)
    before = len(os.listdir(f"/proc/{host}/fd"))
    crowd = []
    try:
        for _ in range(MAX_UNPROVEN + 36):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(loopback.PROTOCOL + b" " + b"ab" * loopback.NONCE_BYTES + b"\n" + b"x" * 400)
            crowd.append(sock)
        typed = loop.run("type", sid, "still-served")
        assert typed.code == 0, typed.stdout
        held = len(os.listdir(f"/proc/{host}/fd")) - before
        assert held <= MAX_UNPROVEN + 2, held  # + the CLI's own connection, closing
        dropped = 0
        for sock in crowd[:36]:
            sock.settimeout(5)
            try:
                while sock.recv(4096):
                    pass
                dropped += 1
            except OSError:
                dropped += 1  # a reset: dropped with our junk unread
        assert dropped == 36
    finally:
        for sock in crowd:
            sock.close()
    assert pid_alive(host)
    assert loop.run("wait", sid, "--text", "still-served", "--timeout", "10s").result["matched"] is True
