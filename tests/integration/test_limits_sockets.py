"""Limits of a host's socket: its path's length, a host that cannot serve it, and a crowd of
callers at a busy host (issue 11, items 6 and 7)."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest

from agent_tty.protocol import rpc
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from tests.conftest import Cli, pid_alive, wait_until

pytestmark = pytest.mark.integration


def test_a_runtime_folder_too_long_for_sun_path_is_passed_over(cli: Cli) -> None:
    # A private $XDG_RUNTIME_DIR of ours whose sockets' paths would not fit in sun_path's 108
    # bytes: once, create failed (exit 6) and left its program running.
    runtime = Path(tempfile.mkdtemp(prefix="at-", dir="/tmp")) / ("r" * 90)
    runtime.mkdir(mode=0o700)
    try:
        created = cli.run("create", "--", "sleep", "300", env={"XDG_RUNTIME_DIR": str(runtime)})
        assert created.code == 0, created.stdout + created.stderr
        sid = created.result["sessionId"]
        socket_path = cli.manifest(sid)["socketPath"]
        assert len(os.fsencode(socket_path)) < 108 and not socket_path.startswith(str(runtime))
        assert cli.run("snapshot", sid).code == 0
        assert cli.run("destroy", sid).code == 0
    finally:
        shutil.rmtree(runtime.parent, ignore_errors=True)


@pytest.mark.parametrize("transport", ["unix", "loopback"])
def test_a_host_that_cannot_serve_its_socket_says_why_and_stops_its_program(cli: Cli, tmp_path: Path, transport: str) -> None:
    # The host's listen is held before it clears the socket's path (a Unix socket) or renames its
    # address file onto it (a loopback port); a folder put there meanwhile makes the listen fail
    # after the program started.
    log = tmp_path / "replay.log"
    log.touch()
    op = "unlink" if transport == "unix" else "rename"
    env = {**cli.replay_env(f"host:{op}:.sock:1:1500", log), "AGENT_TTY_TRANSPORT": transport}
    creating = cli.start("create", "--", "sleep", "300", env=env)
    held = wait_until(lambda: [ln for ln in log.read_text().splitlines() if ln.startswith(f"hold host {op}")], what="the held listen")
    socket_path = held[0].split()[3]
    os.mkdir(socket_path)
    try:
        out, err = creating.communicate(timeout=60)
        assert creating.returncode == 6, out + err
        sid = Path(socket_path).name.removesuffix(".sock")
        error = __import__("json").loads(out)["error"]
        assert error["code"] == "HOST_UNREACHABLE" and "could not serve its socket" in error["message"], error
        assert "could not serve its socket" in (cli.folder(sid) / "host.log").read_text()
        program_pid = cli.program(sid)["pid"]
        wait_until(lambda: not pid_alive(program_pid), what="the program to be stopped")
        manifest = wait_until(lambda: (m := cli.manifest(sid))["status"] == "destroyed" and m, what="the record to end")
        assert manifest["failure"]["reason"] == "host-start-failed"
        assert cli.run("destroy", sid).code == 0
    finally:
        os.rmdir(socket_path)


def test_two_dozen_callers_of_a_stopped_host_all_get_their_answer(cli: Cli) -> None:
    # A host that is stopped (or busy) queues its callers; past 16 a connect once failed with
    # EAGAIN, reported as INTERNAL_ERROR "BlockingIOError".
    sid = cli.create("sh", "-c", "echo ready; sleep 300")["sessionId"]
    host = cli.manifest(sid)["hostPid"]
    os.kill(host, signal.SIGSTOP)
    try:
        callers = [cli.start("snapshot", sid) for _ in range(24)]
        # Hold the host until every caller has connected (or given up, as they once did).
        wait_until(lambda: all(c.poll() is not None or _has_socket(c.pid) for c in callers), timeout=30, what="callers")
        time.sleep(0.3)
    finally:
        os.kill(host, signal.SIGCONT)
    outcomes = [(c.wait(timeout=60), c.stdout.read() + c.stderr.read()) for c in callers]  # type: ignore[union-attr]
    for caller in callers:
        caller.stdout.close()  # type: ignore[union-attr]
        caller.stderr.close()  # type: ignore[union-attr]
    assert [code for code, _ in outcomes] == [0] * 24, outcomes
    assert cli.run("destroy", sid).code == 0


def test_a_host_out_of_descriptors_keeps_its_session(cli: Cli) -> None:
    # Each waiting caller holds a descriptor of the host; with none left, accept() fails with
    # EMFILE. That once escaped the host's loop: the host died and took its program with it.
    sid = cli.create("sh", "-c", "echo ready; sleep 300")["sessionId"]
    host = cli.manifest(sid)["hostPid"]
    soft, hard = resource.prlimit(host, resource.RLIMIT_NOFILE)
    in_use = len(os.listdir(f"/proc/{host}/fd"))
    resource.prlimit(host, resource.RLIMIT_NOFILE, (in_use + 1, hard))  # one descriptor free
    try:
        waits = [cli.start("wait", sid, "--text", "never printed", "--timeout", "2s") for _ in range(4)]
        wait_until(lambda: all(w.poll() is not None or _has_socket(w.pid) for w in waits), timeout=30, what="callers")
        time.sleep(1.0)  # the host meets EMFILE with every caller still waiting
        assert pid_alive(host), "the host died (out of descriptors it cannot even write host.log)"
    finally:
        resource.prlimit(host, resource.RLIMIT_NOFILE, (soft, hard))
    codes = [w.wait(timeout=60) for w in waits]
    for caller in waits:
        caller.stdout.close()  # type: ignore[union-attr]
        caller.stderr.close()  # type: ignore[union-attr]
    assert codes == [11] * 4  # each one served once a descriptor was free: timed out, not lost
    assert cli.run("snapshot", sid).code == 0
    assert cli.run("destroy", sid).code == 0


def _has_socket(pid: int) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:") for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


def _full_listener() -> tuple[str, socket.socket, list[socket.socket]]:
    """A listening socket whose queue is full: the next connect gets EAGAIN."""
    folder = tempfile.mkdtemp(prefix="at-", dir="/tmp")  # short: sun_path
    path = os.path.join(folder, "h.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(0)
    queued: list[socket.socket] = []
    while True:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.setblocking(False)
        try:
            client.connect(path)
        except BlockingIOError:
            client.close()
            break
        queued.append(client)
    return path, server, queued


def test_a_queue_that_stays_full_is_a_host_timeout_not_a_crash() -> None:
    path, server, queued = _full_listener()
    try:
        started = time.monotonic()
        with pytest.raises(AgentTtyError) as raised:
            rpc.call(path, {"op": "ping"}, timeout=0.5)
        assert raised.value.code is ErrorCode.HOST_TIMEOUT and "busy" in raised.value.message
        assert time.monotonic() - started >= 0.3  # it retried, it did not give up at once
    finally:
        for client in queued:
            client.close()
        server.close()
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def test_a_caller_retries_until_the_queue_has_room() -> None:
    path, server, queued = _full_listener()

    def serve() -> None:
        time.sleep(0.3)
        for client in queued:
            client.close()
        while True:
            conn, _ = server.accept()
            request = conn.recv(65536)
            if request:
                conn.sendall(rpc.encode({"ok": True, "result": {"pong": True}}))
                conn.close()
                return
            conn.close()  # one of the queued connects, closed by its client

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        assert rpc.call(path, {"op": "ping"}, timeout=5) == {"pong": True}
    finally:
        thread.join(5)
        server.close()
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)
