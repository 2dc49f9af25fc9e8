"""One connection carries several requests to a real host, and rpc.Connection reuses it safely
(issue 16, host side)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest

from agent_tty.platform.system import current
from agent_tty.protocol import rpc
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from tests.conftest import Cli, pid_alive, wait_until

pytestmark = pytest.mark.integration


def _session(cli: Cli) -> tuple[str, str, int]:
    created = cli.create("cat")
    sid = created["sessionId"]
    return sid, cli.manifest(sid)["socketPath"], created["hostPid"]


def _lines(sock: socket.socket, count: int) -> list[bytes]:
    sock.settimeout(10)
    data = b""
    while data.count(b"\n") < count:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.splitlines()


def test_two_requests_on_one_connection_get_both_answers(cli: Cli) -> None:
    sid, path, _host = _session(cli)
    with current().connect(path, 10) as sock:  # a Unix socket, or a loopback port once proven
        # One after the other, the second sent once the first is answered.
        sock.sendall(rpc.encode({"op": "ping"}))
        first = rpc.decode(_lines(sock, 1)[0])
        sock.sendall(rpc.encode({"op": "keys", "keys": ["a"]}))
        second = rpc.decode(_lines(sock, 1)[0])
        # Two sent at once, before any answer: both answered, in order.
        sock.sendall(rpc.encode({"op": "ping"}) + rpc.encode({"op": "inspect"}))
        third, fourth = (rpc.decode(line) for line in _lines(sock, 2))
    assert first["ok"] and first["result"]["sessionId"] == sid, first
    assert second["ok"] and second["result"]["keys"] == ["a"], second
    assert third["ok"] and third["result"]["status"] == "running", third
    assert fourth["ok"] and fourth["result"]["sessionId"] == sid, fourth
    # A wait answers later on the same connection, then the connection takes the next request.
    with rpc.Connection(path, session_id=sid) as conn:
        waited = threading.Thread(target=lambda: results.append(conn.request({"op": "wait", "text": "hello", "timeoutMs": 10000}, timeout=15)))
        results: list[dict[str, Any]] = []
        waited.start()
        time.sleep(0.2)
        assert cli.run("type", sid, "hello").code == 0
        waited.join(15)
        assert results and results[0]["matched"] is True, results
        assert "hello" in conn.request({"op": "snapshot"})["text"]
        with pytest.raises(AgentTtyError) as raised:  # an error answer leaves the connection usable
            conn.request({"op": "nosuch"})
        assert raised.value.code is ErrorCode.PROTOCOL_ERROR
        assert conn.request({"op": "ping"})["sessionId"] == sid


@pytest.mark.parametrize("force", [False, True], ids=["destroy", "force"])
def test_a_held_connection_does_not_hold_up_destroy(cli: Cli, force: bool) -> None:
    sid, path, host = _session(cli)
    idle = current().connect(path, 10)  # connected, never sends
    conn = rpc.Connection(path, session_id=sid)
    try:
        assert conn.request({"op": "ping"})["hostPid"] == host  # the host keeps this one open
        started = time.monotonic()
        done = cli.run("destroy", *(["--force"] if force else []), sid, timeout=30)
        assert done.code == 0, (done.stdout, done.stderr)
        assert done.result["status"] == "destroyed"
        assert time.monotonic() - started < 10
        wait_until(lambda: not pid_alive(host), timeout=10, what="the host to end")
        idle.settimeout(5)
        assert idle.recv(1) == b""  # the host closed what it held
        with pytest.raises(AgentTtyError) as raised:
            conn.request({"op": "ping"})
        assert raised.value.code is ErrorCode.HOST_UNREACHABLE
    finally:
        idle.close()
        conn.close()


def test_connection_reconnects_only_when_nothing_was_sent(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    sid, path, _host = _session(cli)
    connects: list[str] = []
    real_connect = rpc._connect

    def counting(socket_path: str, timeout: float | None, session_id: str | None) -> socket.socket:
        connects.append(socket_path)
        return real_connect(socket_path, timeout, session_id)

    monkeypatch.setattr(rpc, "_connect", counting)
    conn = rpc.Connection(path, session_id=sid)
    try:
        assert conn.request({"op": "ping"})["sessionId"] == sid
        assert len(connects) == 1
        # The host closes the connection between requests (here: it read our EOF): the next
        # request sees that before it sends anything, and goes over a new connection.
        first = conn._sock
        assert first is not None
        first.shutdown(socket.SHUT_WR)
        wait_until(lambda: first.recv(1, socket.MSG_PEEK) == b"", timeout=5, what="the host to close")
        assert conn.request({"op": "keys", "keys": ["b"]})["keys"] == ["b"]
        assert len(connects) == 2 and conn._sock is not first
        # Closed after the request went (the host is killed while a wait runs): the caller gets
        # HOST_UNREACHABLE and the request is not sent again (no new connection).
        failures: list[AgentTtyError] = []

        def wait() -> None:
            try:
                conn.request({"op": "wait", "text": "never printed", "timeoutMs": 30000}, timeout=40)
            except AgentTtyError as err:
                failures.append(err)

        waiting = threading.Thread(target=wait)
        waiting.start()
        time.sleep(0.3)
        assert cli.run("destroy", "--force", sid, timeout=30).code == 0
        waiting.join(20)
        assert not waiting.is_alive()
        assert [f.code for f in failures] == [ErrorCode.HOST_UNREACHABLE], failures
        assert len(connects) == 2, connects
        # After the session is gone, a request finds the connection closed, reconnects (nothing
        # was sent) and is told nobody answers.
        with pytest.raises(AgentTtyError) as raised:
            conn.request({"op": "ping"})
        assert raised.value.code is ErrorCode.HOST_UNREACHABLE and "no host answers" in raised.value.message
    finally:
        conn.close()
