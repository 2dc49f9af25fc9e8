"""The Python API (agent_tty.api) against real hosts: the CLI's results, errors and guards,
because both call the same operations; and nothing held between calls that another process
may change."""

from __future__ import annotations

import os
import shlex
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_tty.api import AgentTtyError, Client, ErrorCode, Session
from agent_tty.protocol.rpc import ConnectionPool
from tests.conftest import Cli, group_members, pid_alive, wait_until

TIMING = {"elapsedMs", "durationMs", "startedAt", "updatedAt", "ageSeconds", "homeFreeBytes", "lastActivityAt", "createdAt"}


@pytest.fixture
def client(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    """A Client of the `cli` fixture's Home: its hosts carry the Home in their environment, so
    the fixture's teardown finds any process a test left (a spare host too)."""
    monkeypatch.setenv("AGENT_TTY_HOME", str(cli.home))
    if cli.pin:
        monkeypatch.setenv("AGENT_TTY_MECHANISM", cli.pin)
    with Client() as client:
        yield client


def _shell(client: Client) -> Session:
    session = client.create(["bash", "--norc", "--noprofile"], env={"PS1": "$ "})
    assert session.wait("$", timeout=10)["matched"]
    return session


def _same(api: dict, cli: dict) -> None:
    """The API's result is the command's `--json` result, but for clocks."""
    assert _without_clocks(api) == _without_clocks(cli)


def _without_clocks(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_clocks(v) for k, v in value.items() if k not in TIMING}
    return value


def test_the_api_answers_as_the_cli_does(client: Client, cli: Cli, tmp_path: Path) -> None:
    session = _shell(client)
    ran = session.run("echo api-$((40+2))", timeout=10)
    assert ran["completed"] and not ran["timedOut"] and ran["exitStatus"] == 0
    assert session.wait("api-42", timeout=5)["matched"]
    _same(session.snapshot(), cli.run("snapshot", session.id).result)
    _same(session.snapshot(structured=True), cli.run("snapshot", session.id, "--format", "structured").result)
    _same(session.inspect(), cli.run("inspect", session.id).result)
    listed = client.list()
    assert [s["sessionId"] for s in listed["sessions"]] == [session.id]

    shot = session.screenshot(out=tmp_path / "screen.png")
    assert (tmp_path / "screen.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert Path(shot["path"]).read_bytes() == (tmp_path / "screen.png").read_bytes()
    assert session.mark("here")["seq"] > ran["seq"]
    assert session.resize(100, 30)["cols"] == 100
    assert session.send_keys("Up", "Down")["seq"] > 0

    done = session.destroy()
    assert done["destroyed"] and done["status"] == "destroyed"
    assert not pid_alive(session.created["childPid"])  # type: ignore[index]
    cast = session.export(out=tmp_path / "rec.cast")
    assert cast["events"] > 0 and (tmp_path / "rec.cast").read_text().startswith('{"version": 2')
    # An ended session answers from its event log, as the CLI's does.
    assert session.snapshot()["source"] == "replay"
    assert "api-42" in "\n".join(session.snapshot()["lines"])
    assert session.destroy()["alreadyDestroyed"] is True
    assert client.gc()["removedSessions"] == [session.id]


def test_errors_carry_the_contract_codes(client: Client) -> None:
    def code(call) -> tuple[ErrorCode, int]:  # type: ignore[no-untyped-def]
        with pytest.raises(AgentTtyError) as caught:
            call()
        return caught.value.code, int(caught.value.exit_code)

    assert code(lambda: client.session("abc").snapshot()) == (ErrorCode.SESSION_NOT_FOUND, 3)
    assert code(lambda: client.session("../x").snapshot()) == (ErrorCode.INVALID_INPUT, 2)
    assert code(lambda: client.create([])) == (ErrorCode.INVALID_INPUT, 2)
    assert code(lambda: client.create(["true"], cols=0)) == (ErrorCode.INVALID_INPUT, 2)
    assert code(lambda: client.gc(older_than=-1)) == (ErrorCode.INVALID_INPUT, 2)
    session = _shell(client)
    assert code(lambda: session.send_keys("NoSuchKey")) == (ErrorCode.INVALID_INPUT, 2)
    assert code(lambda: session.wait("x", timeout=-1)) == (ErrorCode.INVALID_INPUT, 2)
    assert code(lambda: session.wait(regex="(")) == (ErrorCode.INVALID_INPUT, 2)
    assert code(lambda: session.wait("a", regex="b")) == (ErrorCode.INVALID_INPUT, 2)
    timed_out = session.wait("never-printed", timeout=0.2)
    assert timed_out["timedOut"] is True and timed_out["matched"] is False
    session.destroy()
    assert code(lambda: session.type("x")) == (ErrorCode.SESSION_NOT_RUNNING, 4)
    assert code(lambda: session.run("true")) == (ErrorCode.SESSION_NOT_RUNNING, 4)


def test_a_session_another_process_destroyed_is_not_running(client: Client, cli: Cli) -> None:
    session = _shell(client)
    session.type("echo one\n")
    assert cli.run("destroy", session.id).code == 0  # another process, between two calls
    with pytest.raises(AgentTtyError) as caught:
        session.type("echo two\n")
    assert caught.value.code is ErrorCode.SESSION_NOT_RUNNING
    assert caught.value.details["status"] == "destroyed"


def test_a_host_that_died_between_calls_is_reconciled_as_the_cli_would(client: Client, cli: Cli) -> None:
    session = _shell(client)
    host_pid = session.created["hostPid"]  # type: ignore[index]
    child_pid = session.created["childPid"]  # type: ignore[index]
    os.kill(host_pid, signal.SIGKILL)  # the host this test started
    wait_until(lambda: not pid_alive(host_pid), what="the host to die")
    with pytest.raises(AgentTtyError) as caught:
        session.send_keys("Enter")
    assert caught.value.code is ErrorCode.SESSION_NOT_RUNNING
    assert cli.manifest(session.id)["status"] == "failed"
    assert session.inspect()["status"] == "failed"
    # The program the dead host left is still the session's: destroy --force proves and ends it.
    assert session.destroy(force=True)["destroyed"]
    wait_until(lambda: not pid_alive(child_pid), what="the program to end")


def test_a_destroy_from_inside_the_program_runs_detached(client: Client, cli: Cli) -> None:
    """The program force-destroys its own session through the API. Run in the program's group,
    the destroy would die in the kill it makes, before it records the end; the API runs it as a
    detached copy (ReRunsInNewSession, as the CLI's destroy), which records it."""
    script = (
        "import os\n"
        "from agent_tty.api import Client\n"
        "Client().session(os.environ['AGENT_TTY_SESSION_ID']).destroy(force=True)\n"
    )
    session = _shell(client)
    session.type(f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}\n")
    wait_until(lambda: cli.manifest(session.id)["status"] == "destroyed", timeout=30, what="the session to be destroyed")
    wait_until(lambda: group_members(session.created["childPid"]) == [], what="the program's group to end")  # type: ignore[index]


def _spares(client: Client) -> list[int]:
    """Our children that are spare hosts (`agent_tty.host --standby`)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat[1]) == os.getpid() and b"--standby" in argv and stat[0] not in ("Z", "X"):
            found.append(int(name))
    return found


def test_a_spare_host_serves_the_next_create_and_ends_with_the_client(client: Client, cli: Cli) -> None:
    first = client.create(["sleep", "300"])
    spare = wait_until(lambda: _spares(client), what="a spare host")
    assert client.warm_up(wait=30)  # the same spare, now warm
    second = client.create(["sleep", "300"])
    assert second.created["hostPid"] == spare[0]  # type: ignore[index]
    assert second.inspect()["status"] == "running"
    assert cli.run("snapshot", second.id).code == 0  # served like any host
    for session in (first, second):
        assert session.destroy()["status"] == "destroyed"
    assert _spares(client)  # the next one waits
    client.close()
    # The spare ends at the end of its pipe, a moment after close (seen still there once, in CI).
    wait_until(lambda: _spares(client) == [], timeout=20, what="the spare host to end with the client")


def test_a_spare_host_still_warming_up_is_kept_for_a_later_create(client: Client) -> None:
    """A create does not wait for a spare's warm-up (the screen engine: ~0.5 s of CPU): it
    launches a host of its own, and the spare serves a later create."""
    client.warm_up()
    spare = wait_until(lambda: _spares(client), what="a spare host")
    first = client.create(["sleep", "300"])  # at once: the spare is still importing
    assert first.created["hostPid"] != spare[0]  # type: ignore[index]
    assert _spares(client) == spare
    assert client.warm_up(wait=30)
    second = client.create(["sleep", "300"])
    assert second.created["hostPid"] == spare[0]  # type: ignore[index]
    first.destroy()
    second.destroy()


def test_a_spare_host_started_with_another_environment_is_not_used(
    client: Client, cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The program inherits the host's environment: a spare started before the client's
    environment changed would hand the program the old one."""
    monkeypatch.setenv("AGENT_TTY_TEST_VALUE", "before")
    client.create(["sleep", "300"]).destroy()
    stale = wait_until(lambda: _spares(client), what="a spare host")
    assert client.warm_up(wait=30)  # warm: only the environment can turn it down
    monkeypatch.setenv("AGENT_TTY_TEST_VALUE", "after")
    out = tmp_path / "value.txt"
    session = client.create(["sh", "-c", f'echo "$AGENT_TTY_TEST_VALUE" > {out}; exec sleep 300'])
    wait_until(lambda: out.exists() and out.read_text().strip(), what="the program's output")
    assert out.read_text().strip() == "after"
    assert session.created["hostPid"] != stale[0]  # type: ignore[index]
    session.destroy()


def _sockets() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return count


def test_one_connection_per_live_host_is_kept_and_closed_with_the_client(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TTY_HOME", str(cli.home))
    if cli.pin:
        monkeypatch.setenv("AGENT_TTY_MECHANISM", cli.pin)
    client = Client(spare_host=False)
    session = _shell(client)
    before = _sockets()
    for _ in range(5):
        session.snapshot()
        session.send_keys("a")
    assert _sockets() == before  # the connection the first calls opened, reused
    other = _shell(client)
    other.snapshot()
    assert _sockets() == before + 1  # one per live host
    session.destroy()
    other.destroy()
    client.close()
    assert _sockets() == before - 1


def test_find_resolves_a_name_or_an_id_prefix_as_the_cli_does(client: Client) -> None:
    build = client.create(["sleep", "300"], name="build")
    assert client.find("build").id == build.id
    assert client.find(build.id).id == build.id
    assert client.find(build.id[:6]).id == build.id
    handle = client.find("build")
    build.destroy()
    again = client.create(["sleep", "300"], name="build")  # the name now names another session
    assert client.find("build").id == again.id
    assert handle.inspect()["status"] == "destroyed"  # the handle kept the id it resolved to
    with pytest.raises(AgentTtyError) as caught:
        client.find("no-such-name")
    assert caught.value.code is ErrorCode.SESSION_NOT_FOUND
    again.destroy()


def test_connections_to_ended_sessions_are_let_go(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that outlives many sessions (the MCP server) keeps no socket for each ended one."""
    monkeypatch.setenv("AGENT_TTY_HOME", str(cli.home))
    if cli.pin:
        monkeypatch.setenv("AGENT_TTY_MECHANISM", cli.pin)
    client = Client(spare_host=False)
    keeper = client.create(["sleep", "300"])
    before = _sockets()
    ended = [client.create(["sleep", "300"]) for _ in range(ConnectionPool.SWEEP_AT + 2)]
    for session in ended:
        session.inspect()
        session.send_keys("a")  # a kept connection each
    assert _sockets() >= before + len(ended)
    for session in ended:
        assert cli.run("destroy", session.id).code == 0  # another process ends them
    keeper.send_keys("a")
    assert _sockets() <= before + 1  # the keeper's; the ended sessions' were dropped
    keeper.destroy()
    client.close()


def test_wait_durations_say_their_unit_and_errors_name_the_keywords(client: Client) -> None:
    """As the CLI's --screen-stable-ms and --idle-ms, and the MCP tool's parameters: milliseconds
    (ADR 0028); `stable` and `idle` (seconds) still work, deprecated. The shared operation's
    errors name the API's keywords, not the CLI's flags."""
    import time
    import warnings

    session = _shell(client)
    for condition in ("screen_stable_ms", "idle_ms"):
        start = time.monotonic()
        assert session.wait(timeout=20, **{condition: 300})["matched"], condition
        assert time.monotonic() - start < 10, condition
    with pytest.warns(DeprecationWarning, match="screen_stable_ms"):
        assert session.wait(stable=0.3, timeout=20)["matched"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(AgentTtyError, match="not both"):
            session.wait(stable=0.3, screen_stable_ms=300)

    def message(call) -> str:  # type: ignore[no-untyped-def]
        with pytest.raises(AgentTtyError) as caught:
            call()
        assert caught.value.code is ErrorCode.INVALID_INPUT and "--" not in caught.value.message, caught.value.message
        return caught.value.message

    assert "text, regex, screen_stable_ms, idle_ms, exit" in message(lambda: session.wait("a", exit=True))
    assert message(lambda: session.wait("a", after_seq="first")).startswith("invalid after_seq 'first'")
    assert message(lambda: session.wait(regex="(")).startswith("invalid regex '('")
    assert message(lambda: session.wait("a", after_seq=-1)).startswith("invalid after_seq -1")
    assert "screen_stable_ms" in message(lambda: session.wait(screen_stable_ms=0))
    assert message(lambda: client.create(["true"], cwd="/no/such/folder")).startswith("cwd '/no/such/folder'")
    assert message(lambda: client.create(["true"], name=session.id)).startswith("invalid name ")
    assert message(lambda: session.export("svg")).startswith("invalid format 'svg'")
    session.destroy()
