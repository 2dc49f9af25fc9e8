"""A session whose folder was removed from under its host (`rm -rf` of a Home, a pytest basetemp
rotated after a killed run) can be reached by no command: its host ends it as destroy would,
through the group's proof, and writes nothing at the path it no longer owns."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import NOT_PINNED, Cli, default_mechanism, group_members, pid_alive, wait_until

pytestmark = [pytest.mark.integration]

HUP_IGNORING_TREE = ("sh", "-c", 'trap "" HUP; sleep 300 & wait')


def _started(cli: Cli) -> dict:
    created = cli.create(*HUP_IGNORING_TREE)
    wait_until(lambda: len(group_members(created["childPid"])) >= 2, what="sleep to start")
    return created


def _ended(created: dict, timeout: float = 20) -> None:
    wait_until(lambda: not pid_alive(created["hostPid"]), timeout=timeout, what="the host to end")
    assert group_members(created["childPid"]) == []  # the hang-up-proof `sleep` too


@pytest.mark.parametrize("mechanism", sorted({"linux_autogroup", default_mechanism()}))
def test_a_host_whose_home_was_removed_ends_its_session(cli: Cli, mechanism: str) -> None:
    cli.pin = mechanism
    created = _started(cli)
    shutil.rmtree(cli.home)
    _ended(created)


@NOT_PINNED
def test_a_host_whose_folder_was_replaced_writes_nothing_into_the_new_one(cli: Cli, tmp_path: Path) -> None:
    created = _started(cli)
    folder = cli.folder(created["sessionId"])
    folder.rename(folder.with_name("moved-away"))
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    folder.symlink_to(decoy)
    _ended(created)
    assert os.listdir(decoy) == []
    folder.unlink()  # the fixture's teardown finds no session to end
    shutil.rmtree(folder.with_name("moved-away"))


def test_a_home_made_unsearchable_is_not_a_removal(cli: Cli) -> None:
    created = _started(cli)
    os.chmod(cli.home, 0)
    try:
        # Two folder checks: the host keeps its session (as root the path stays readable).
        subprocess.run(["sleep", "4.5"], check=True)
        assert pid_alive(created["hostPid"]) and len(group_members(created["childPid"])) >= 2
    finally:
        os.chmod(cli.home, 0o700)
    assert cli.run("inspect", created["sessionId"]).result["status"] == "running"


KILLED_RUN = '''
import json, os, signal


def test_killed_mid_run(agent_tty_session):
    # A job of the shell: its own process group, in the session's.
    agent_tty_session.run("sleep 300 & echo $! > " + os.environ["RECORD"] + ".job")
    with open(os.environ["RECORD"], "w") as out:
        job = int(open(os.environ["RECORD"] + ".job").read())
        out.write(json.dumps({**agent_tty_session.created, "job": job}))
    os.kill(os.getpid(), signal.SIGKILL)  # no teardown runs
'''


@NOT_PINNED
def test_a_pytest_run_killed_mid_test_leaves_nothing_once_its_basetemp_is_cleared(tmp_path: Path) -> None:
    (tmp_path / "test_killed.py").write_text(KILLED_RUN)
    (tmp_path / "test_next.py").write_text("def test_nothing(tmp_path):\n    pass\n")  # tmp_path clears the basetemp
    record = tmp_path / "created.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_TTY_", "PYTEST_"))}
    env["RECORD"] = str(record)

    def pytest_run(test: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--basetemp={tmp_path / 'base'}", test]
        return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    killed = pytest_run("test_killed.py")
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    created = json.loads(record.read_text())
    try:
        assert pid_alive(created["hostPid"])  # the session outlived its test
        assert pid_alive(created["job"])
        assert pytest_run("test_next.py").returncode == 0  # this run clears the basetemp
        _ended(created)
        wait_until(lambda: not pid_alive(created["job"]), what="the shell's job to end")
    finally:
        for pid in (created["hostPid"], created["job"], *group_members(created["childPid"])):
            if not pid_alive(pid):
                continue
            try:
                os.kill(pid, signal.SIGKILL)  # ours (this test started it): only if it survived
            except ProcessLookupError:
                pass
