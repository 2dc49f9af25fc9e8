"""A pid the program's session ended with, reused by an unrelated session, is never signalled (R15).

The program P exits; once nothing of its session runs, the kernel may give P to anyone. Here an
unrelated process of the same user takes it for real (root writes P-1 to ns_last_pid and forks),
calls setsid (session and process group P, just like the program's), forks a `sleep 300` and
exits. That sleep is in process group P and session P, as a process the program left would be.
macos_ps proves the group by the leader's start time, and once the leader is gone by its members
started no later than the host's reap (ADR 0026): this one started after it, so it reads
ambiguous. destroy, a reconcile after the host's death (list) and gc must leave it alone, and gc
and destroy must say what is unknown. Each test ends the process it started, by pid.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli, agent_tty_command, default_mechanism, pid_alive, wait_until

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not sys.platform.startswith("linux") or os.geteuid() != 0 or not os.access("/proc/sys/kernel/ns_last_pid", os.W_OK),
        reason="needs Linux and root: the test forces pid reuse through /proc/sys/kernel/ns_last_pid",
    ),
]

TAKE_PID = r"""
import os, sys, time
target, out = int(sys.argv[1]), sys.argv[2]
for _attempt in range(100):
    with open("/proc/sys/kernel/ns_last_pid", "w") as handle:
        handle.write(str(target - 1))
    pid = os.fork()
    if pid == 0:
        if os.getpid() != target:
            os._exit(1)
        os.setsid()  # session and process group `target`, as the program's were
        child = os.fork()
        if child == 0:
            os.execvp("sleep", ["sleep", "300"])
        with open(out + ".tmp", "w") as handle:
            handle.write(str(child))
        os.rename(out + ".tmp", out)
        os._exit(0)  # the session's leader ends: only its child runs, in group and session `target`
    _pid, status = os.waitpid(pid, 0)
    if pid == target:
        sys.exit(0 if status == 0 else 3)
    time.sleep(0.005)
sys.exit(2)
"""
"""argv: PID OUT. Exit 2: another process took the pid first (the test skips)."""

SUBREAPER = r"""
import ctypes, os, subprocess, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
with open(sys.argv[1], "w") as out:
    subprocess.run(sys.argv[2:], stdout=out, check=False)
while True:  # reap the orphans (the host, then its program), as an init that reaps would
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(0.02)
"""
"""argv: OUT COMMAND...: runs COMMAND (create) with stdout to OUT, then reaps its orphans. This
machine's PID 1 may not reap: without it the program's zombie would hold its pid forever."""


@pytest.fixture(params=sorted({default_mechanism(), "macos_ps"}))
def cli(request, cli: Cli) -> Cli:  # type: ignore[no-untyped-def]
    cli.pin = request.param
    return cli


@pytest.fixture
def taken(tmp_path: Path) -> Iterator[list[int]]:
    """The processes the tests start (the sleep in the reused session); killed by pid at the end."""
    started: list[int] = []
    yield started
    for pid in started:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _take_pid(pid: int, tmp_path: Path, taken: list[int]) -> int:
    """An unrelated session at `pid` whose leader ended: the pid of the child it left."""
    wait_until(lambda: not Path(f"/proc/{pid}").exists(), what=f"pid {pid} to be free")
    out = tmp_path / f"taken-{pid}"
    done = subprocess.run([sys.executable, "-c", TAKE_PID, str(pid), str(out)], timeout=30)
    if done.returncode == 2:
        pytest.skip(f"another process took pid {pid} first")
    assert done.returncode == 0, done
    child = int(out.read_text())
    taken.append(child)
    with open(f"/proc/{child}/stat") as handle:
        fields = handle.read().rpartition(")")[2].split()
    assert (int(fields[2]), int(fields[3])) == (pid, pid), "the child is in process group and session `pid`"
    return child


def _exited_session(cli: Cli) -> dict:
    """A session whose program exited on its own, seen by its host, whose host then ended."""
    created = cli.create("sh", "-c", "sleep 0.2")
    sid = created["sessionId"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="the program's exit")
    wait_until(lambda: not pid_alive(created["hostPid"]), what="the host's end")
    return created


def _says_unknown(text: str, pgid: int) -> None:
    assert f"process group {pgid}" in text and "nothing proves they are the session's" in text, text
    assert "nothing was signalled" in text, text


def test_destroy_never_signals_a_session_that_took_the_id(cli: Cli, tmp_path: Path, taken: list[int]) -> None:
    created = _exited_session(cli)
    sid, pgid = created["sessionId"], created["childPid"]
    child = _take_pid(pgid, tmp_path, taken)
    done = cli.run("destroy", sid)
    assert pid_alive(child), "destroy signalled a process of an unrelated session"
    if cli.pin == "macos_ps":
        # It cannot prove the process is the session's, and says so rather than kill it.
        assert done.code == 5, done.stdout
        error = done.error
        assert error["code"] == "HOST_TIMEOUT" and error["details"]["verdict"] == "ambiguous", error
        _says_unknown(error["message"], pgid)
        assert cli.manifest(sid)["status"] == "exited"
    else:
        assert done.code == 0, done.stdout  # the token proves the sleep is not the program's
    os.kill(child, signal.SIGKILL)
    wait_until(lambda: not pid_alive(child), what="the unrelated process to end")
    done = cli.run("destroy", sid)
    assert done.code == 0, done.stdout


def test_gc_keeps_the_session_and_names_what_is_unknown(cli: Cli, tmp_path: Path, taken: list[int]) -> None:
    created = _exited_session(cli)
    sid, pgid = created["sessionId"], created["childPid"]
    child = _take_pid(pgid, tmp_path, taken)
    done = cli.run("gc")
    assert done.code == 0, done.stdout
    assert pid_alive(child), "gc signalled a process of an unrelated session"
    if cli.pin == "macos_ps":
        skipped = {entry["sessionId"]: entry["reason"] for entry in done.result["skippedSessions"]}
        assert sid in skipped, done.result
        _says_unknown(skipped[sid], pgid)
        assert "destroy ends it" not in skipped[sid]
        assert cli.program(sid)["reaped"]["reapedAt"] > 0  # RecordsReap: the host saw the end
    os.kill(child, signal.SIGKILL)
    wait_until(lambda: not pid_alive(child), what="the unrelated process to end")


def test_list_after_the_host_died_never_signals_a_session_that_took_the_id(
    cli: Cli, tmp_path: Path, taken: list[int]
) -> None:
    """No host saw the program end (another process reaped it): no member can be dated."""
    out = tmp_path / "created.json"
    argv = [*agent_tty_command(), "--json", "create", "--", "sh", "-c", "trap '' HUP; exec sleep 300"]
    reaper = subprocess.Popen([sys.executable, "-c", SUBREAPER, str(out), *argv], env=cli.env())
    try:
        wait_until(lambda: out.exists() and out.stat().st_size > 0, what="create")
        wait_until(lambda: json.loads(out.read_text()) is not None, what="create's answer")
        created = json.loads(out.read_text())["result"]
        sid, pgid = created["sessionId"], created["childPid"]
        os.kill(created["hostPid"], signal.SIGKILL)  # ours: this test's session
        wait_until(lambda: not Path(f"/proc/{created['hostPid']}").exists(), what="host death")
        os.kill(pgid, signal.SIGKILL)  # the program, reaped by the subreaper, not by a host
        child = _take_pid(pgid, tmp_path, taken)
        done = cli.run("list")
        assert done.code == 0, done.stdout
        assert pid_alive(child), "list signalled a process of an unrelated session"
        if cli.pin == "macos_ps":
            assert "reaped" not in cli.program(sid) or cli.program(sid)["reaped"] is None
            done = cli.run("destroy", sid)
            assert pid_alive(child), "destroy signalled a process of an unrelated session"
            assert done.code == 5, done.stdout
            _says_unknown(done.error["message"], pgid)
        os.kill(child, signal.SIGKILL)
        wait_until(lambda: not pid_alive(child), what="the unrelated process to end")
    finally:
        reaper.kill()
        reaper.wait()
