"""The Python API as a hostile round found it: a Client copied by fork, a caller that dropped
privileges after its spare host started, a client that keeps thousands of connections, a
relative Home. Real hosts, real processes."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agent_tty.api import Client
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.protocol.rpc import ConnectionPool
from tests.conftest import NOT_PINNED, Cli, pid_alive, wait_until
from tests.integration.test_api import _shell, _sockets, _spares

pytestmark = [pytest.mark.integration, NOT_PINNED]


@pytest.fixture
def client(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    monkeypatch.setenv("AGENT_TTY_HOME", str(cli.home))
    with Client() as client:
        yield client


ROUNDS = 40


def test_a_forked_child_and_its_parent_never_read_each_others_answers(client: Client) -> None:
    """multiprocessing forks: the child's copy of the Client must not share the parent's kept
    connection (at once after a fork they swapped answers in 9-20 of 40-60 rounds)."""
    session = _shell(client)
    session.mark("before the forks")  # its imports paid: both sides start at full speed
    wrong, failed = 0, []
    for _ in range(ROUNDS):
        session.snapshot()  # the parent's connection is kept: the child inherits it
        go_read, go_write = os.pipe()
        child = os.fork()
        if child == 0:  # the child: one mark, at the same moment as the parent's snapshot
            code = 0
            try:
                os.close(go_write)
                os.read(go_read, 1)
                answer = session.mark("child")
                code = 3 if "lines" in answer or "seq" not in answer else 0
            except BaseException:  # noqa: BLE001 - any failure is the child's exit code
                code = 4
            os._exit(code)
        os.close(go_read)
        os.write(go_write, b"g")
        os.close(go_write)
        try:
            wrong += "lines" not in session.snapshot()
        except Exception as err:  # noqa: BLE001 - counted, as a swap would be
            failed.append(repr(err))
        _, status = os.waitpid(child, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append(f"child exit {os.waitstatus_to_exitcode(status)}")
    assert wrong == 0 and not failed, (wrong, failed)
    session.destroy()


SPARE_KEEPER = """
import os, signal, sys, time
from agent_tty.api import Client
client = Client()
client.create(["sleep", "300"]).destroy()
assert client.warm_up(wait=60)
spare = client._spare._process.pid
child = os.fork()
if child == 0:  # a worker: it lets go of the test's pipes, keeps what fork gave it
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    time.sleep(60)
    os._exit(0)
print(spare, child, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_forked_worker_does_not_keep_a_dead_clients_spare_alive(cli: Cli) -> None:
    env = {**cli.env(), "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", SPARE_KEEPER], capture_output=True, text=True, env=env, timeout=90)
    spare, child = (int(n) for n in done.stdout.split())
    try:
        wait_until(lambda: not pid_alive(spare), timeout=10, what="the spare to end with its client")
    finally:
        os.kill(child, signal.SIGKILL)  # ours: the worker the script forked


def _program_says(client: Client, tmp_path: Path, shell: str) -> tuple[str, int]:
    out = tmp_path / f"said-{time.monotonic_ns()}.txt"
    session = client.create(["sh", "-c", f"{{ {shell}; }} > {out}.part && mv {out}.part {out}; exec sleep 300"])
    wait_until(out.exists, timeout=20, what="the program's answer")
    said = out.read_text().strip()
    host = session.created["hostPid"]  # type: ignore[index]
    session.destroy()
    return said, host


def test_a_spare_started_before_the_caller_lowered_a_limit_is_not_used(client: Client, tmp_path: Path) -> None:
    client.create(["sleep", "300"]).destroy()
    stale = wait_until(lambda: _spares(client), what="a spare host")
    assert client.warm_up(wait=30)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowered = min(soft, 200) - 7
    resource.setrlimit(resource.RLIMIT_NOFILE, (lowered, hard))
    try:
        said, host = _program_says(client, tmp_path, "ulimit -n")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert said == str(lowered)
    assert host != stale[0]


def test_the_program_gets_the_callers_umask_also_from_a_spare(client: Client, tmp_path: Path) -> None:
    client.create(["sleep", "300"]).destroy()
    wait_until(lambda: _spares(client), what="a spare host")
    assert client.warm_up(wait=30)
    before = os.umask(0o027)
    try:
        said, _ = _program_says(client, tmp_path, "umask")
        assert said == "0027"
        assert client.warm_up(wait=30)  # the spare started under 0o027: it serves this create
        said, _ = _program_says(client, tmp_path, "umask")
        assert said == "0027"
    finally:
        os.umask(before)


def test_the_cli_gives_the_program_the_callers_umask(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "umask.txt"
    done = subprocess.run(
        ["sh", "-c", 'umask 002 && exec "$@"', "_", *cli.command, "--json", "create", "--", "sh", "-c", f"umask > {out}; exec sleep 300"],
        capture_output=True, text=True, env=cli.env(), timeout=60,
    )
    sid = json.loads(done.stdout)["result"]["sessionId"]
    wait_until(lambda: out.exists() and out.read_text().strip(), what="the program's umask")
    assert out.read_text().strip() == "0002"
    cli.run("destroy", sid)


def test_kept_connections_are_bounded(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TTY_HOME", str(cli.home))
    monkeypatch.setattr(ConnectionPool, "KEPT_AT_MOST", 2)
    client = Client(spare_host=False)
    sessions = [client.create(["sleep", "300"]) for _ in range(4)]
    before = _sockets()
    for session in sessions:
        session.snapshot()
    assert _sockets() == before + 2
    for session in sessions:
        session.destroy()
    client.close()


def test_a_relative_home_stays_the_same_home_after_a_chdir(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(cli.home.parent)
    client = Client(home=cli.home.name, spare_host=False)
    session = client.create(["sleep", "300"])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert [s["sessionId"] for s in client.list()["sessions"]] == [session.id]
    assert not (elsewhere / cli.home.name).exists()
    session.destroy()
    client.close()


def _ended(client: Client) -> object:
    session = client.create(["sh", "-c", "echo hello-from-the-log aaaaaaaaaaaaaaaaaaaaaaaaaaa!; exec sleep 300"])
    session.wait(text="hello-from-the-log", timeout=20)
    session.destroy()
    return session


def _in_thread(call: Callable[[], object]) -> object:
    """What `call` returned or raised, run off the main thread (an MCP worker, a library user's pool)."""
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(call)
        return future.exception(timeout=60) or future.result()


def test_a_pattern_judged_off_the_main_thread_gives_only_agent_tty_errors(client: Client) -> None:
    """An ended session's wait in a thread runs the pattern in a child: a NUL or a 200 KiB pattern
    gave a raw ValueError / OSError(E2BIG) through argv (issue 30 item 9, issue 31 item 6)."""
    session = _ended(client)
    for pattern in ({"regex": "hello\x00"}, {"text": "x" * 200_000}, {"regex": "é\ud800"}):
        outcome = _in_thread(lambda: session.wait(timeout=0.5, **pattern))  # type: ignore[attr-defined]
        assert isinstance(outcome, AgentTtyError), (pattern.keys(), outcome)
        assert outcome.code == ErrorCode.SESSION_NOT_RUNNING, outcome
    matched = _in_thread(lambda: session.wait(regex="hello-from-the-l.g", timeout=0.5))  # type: ignore[attr-defined]
    assert isinstance(matched, dict) and matched["matched"] is True, matched


def _cmdlines() -> list[bytes]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            found.append(Path(f"/proc/{pid}/cmdline").read_bytes())
        except OSError:
            continue  # ended meanwhile, or not ours to read
    return found


def test_a_pattern_judged_off_the_main_thread_is_not_in_any_command_line(client: Client) -> None:
    """Every local user reads argv in `ps`: a user's pattern must reach the child through a pipe."""
    session = _ended(client)
    marker = f"secret-{os.getpid()}-{time.monotonic_ns()}"
    explosive = f"(?:{marker})?(a+)+$"  # runs the child for its whole budget on a log of a's
    seen: list[bool] = []
    with ThreadPoolExecutor(1) as pool:
        judged = pool.submit(lambda: session.wait(regex=explosive, timeout=0.5))  # type: ignore[attr-defined]
        while not judged.done():
            seen.append(any(marker.encode() in line for line in _cmdlines()))
        outcome = judged.exception(timeout=60)
    assert isinstance(outcome, AgentTtyError), outcome
    assert not any(seen), f"the pattern was in a command line in {sum(seen)} of {len(seen)} scans"


def test_a_request_over_the_hosts_limit_raises_invalid_input_and_the_session_serves_on(client: Client) -> None:
    session = _shell(client)
    for call in (lambda: session.run("echo " + "a" * (2 << 20)), lambda: session.mark("m" * (2 << 20))):
        with pytest.raises(AgentTtyError) as raised:
            call()
        assert raised.value.code == ErrorCode.INVALID_INPUT and raised.value.details["limit"] == 1 << 20
    assert session.run("echo still-here")["output"].strip() == "still-here"
    session.destroy()


@pytest.mark.parametrize("env", [{"A=B": "x"}, {"A\0": "x"}, {"A": "x\0y"}, {"": "x"}, {"A": "caf\udce9"}])
def test_an_env_entry_the_kernel_would_mangle_is_refused_and_nothing_starts(client: Client, env: dict[str, str]) -> None:
    with pytest.raises(AgentTtyError) as raised:
        client.create(["bash", "--norc"], env=env)
    assert raised.value.code == ErrorCode.INVALID_INPUT and "env" in raised.value.message
    assert client.list(all=True)["sessions"] == []
