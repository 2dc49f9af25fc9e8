"""The pytest plugin agent-tty installs (entry point pytest11): a test gets a live session from a
fixture, and nothing of it runs after the test, whether the test passed or failed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import NOT_PINNED, group_members, pid_alive

pytestmark = NOT_PINNED

INNER = '''
import json, os, pytest

RECORD = os.environ["RECORD"]


def _record(session):
    assert session.client.warm_up(wait=30)  # a spare host, which the test's teardown must end too
    spare = session.client._spare._process.pid
    with open(RECORD, "a") as out:
        out.write(json.dumps({**session.created, "home": session.client.home, "spare": spare}) + "\\n")


def test_a_shell(agent_tty_session):
    _record(agent_tty_session)
    agent_tty_session.run("printf 'ok-%s\\\\n' $((6*7))")
    assert agent_tty_session.wait("ok-42", timeout=5)["matched"]
    agent_tty_session.type("sleep 300 &\\n")  # a process the teardown must end too


@pytest.mark.agent_tty(argv=["python3", "-q"], cols=60, rows=10)
def test_a_program_chosen_by_the_marker(agent_tty_session):
    _record(agent_tty_session)
    assert agent_tty_session.wait(">>>", timeout=10)["matched"]
    assert agent_tty_session.snapshot()["cols"] == 60


def test_a_failing_test_still_ends_its_session(agent_tty_session):
    _record(agent_tty_session)
    assert False, "on purpose"


def test_zz_the_earlier_tests_left_no_spare_host():
    import time
    spares = [json.loads(line)["spare"] for line in open(RECORD)]
    deadline = time.monotonic() + 15
    while any(os.path.exists(f"/proc/{pid}") for pid in spares) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in spares if os.path.exists(f"/proc/{pid}")] == []
'''


def test_the_fixture_gives_a_live_session_and_ends_it(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER)
    record = tmp_path / "sessions.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_TTY_", "PYTEST_"))}
    env["RECORD"] = str(record)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--basetemp={tmp_path / 'base'}", str(tmp_path / "test_inner.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
    )
    assert "1 failed, 3 passed" in done.stdout, done.stdout + done.stderr
    sessions = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(sessions) == 3
    for created in sessions:
        # Destroyed and collected: gc removes only sessions that ended.
        assert not (Path(created["home"]) / "sessions" / created["sessionId"]).exists()
        assert not pid_alive(created["hostPid"])
        assert group_members(created["childPid"]) == []  # the shell's `sleep 300 &` too
    assert len({created["home"] for created in sessions}) == 3  # a Home per test


@pytest.mark.agent_tty(argv=["less", "/etc/os-release"], cols=60, rows=12, env={"LESSHISTFILE": "-"})
def test_our_own_suite_uses_the_fixture(agent_tty_session) -> None:  # type: ignore[no-untyped-def]
    """A full-screen program through the fixture, as a user of the plugin would test one."""
    assert agent_tty_session.wait("NAME=", timeout=10)["matched"]
    snapshot = agent_tty_session.snapshot()
    assert (snapshot["cols"], snapshot["rows"]) == (60, 12)
    assert snapshot["alternateScreen"] is True
    agent_tty_session.send_keys("q")
    assert agent_tty_session.wait(exit=True, timeout=10)["matched"]
