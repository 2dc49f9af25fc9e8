"""Edge cases found in review: each must end safely and say why."""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.conftest import Cli, pid_alive, wait_until

pytestmark = pytest.mark.integration


@pytest.mark.skipif(os.geteuid() == 0, reason="root enters any directory")
def test_a_cwd_the_program_cannot_enter_is_a_clear_error(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o000)
    try:
        done = cli.run("create", "--cwd", str(locked), "--", "true")
        assert done.code == 2, done.stdout
        assert "could not start" in done.error["message"]
        sid = done.error["details"]["sessionId"]
        assert cli.manifest(sid)["status"] == "failed"
        # No forked copy of the host wrote anything after the failure.
        time.sleep(0.3)
        assert cli.manifest(sid)["status"] == "failed"
    finally:
        locked.chmod(0o700)


def test_a_missing_program_record_blocks_the_end_of_an_active_session(cli: Cli) -> None:
    """Nothing proves the program's group ended: no `failed`, no `destroyed` (R11, R13)."""
    created = cli.create("sh", "-c", 'trap "" HUP; exec sleep 300')
    sid, program = created["sessionId"], created["childPid"]
    os.kill(created["hostPid"], signal.SIGKILL)
    wait_until(lambda: not pid_alive(created["hostPid"]), what="host death")
    (cli.folder(sid) / "program.json").unlink()
    try:
        assert cli.run("list").result["sessions"][0]["status"] == "running"
        done = cli.run("destroy", sid)
        assert done.code == 5 and done.error["code"] == "HOST_TIMEOUT"
        assert "program.json" in done.error["message"] and "destroy --force" in done.error["message"]
        assert cli.manifest(sid)["status"] == "running"
        assert pid_alive(program)
        # ForceSkipsUnreadableGroup: --force is the way out, and says what it did not check.
        forced = cli.run("destroy", sid, "--force")
        assert forced.code == 0 and forced.result["status"] == "destroyed"
        assert forced.result["groupUnchecked"] is True and "may still run" in forced.result["warning"]
    finally:
        os.kill(program, signal.SIGKILL)  # this test's own session program, by pid


def test_create_interrupted_before_its_first_manifest_leaves_no_folder(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "replay.log"
    creating = cli.start("create", "--", "sleep", "300", env=cli.replay_env("create:rename:/session.json:1:5000", log))
    wait_until(lambda: log.exists() and "hold" in log.read_text(), what="create hold")
    creating.send_signal(signal.SIGINT)
    creating.communicate(timeout=30)
    assert creating.returncode == 130
    wait_until(lambda: not any((cli.home / "sessions").iterdir()), timeout=10, what="folder removed")


def test_invalid_create_timeout_is_exit_2(cli: Cli) -> None:
    done = cli.run("create", "--", "true", env={"AGENT_TTY_CREATE_TIMEOUT_S": "soon"})
    assert done.code == 2 and "AGENT_TTY_CREATE_TIMEOUT_S" in done.error["message"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000")
def test_an_unreadable_program_record_has_a_way_out(cli: Cli) -> None:
    """ForceSkipsUnreadableGroup: EACCES on program.json does not change on retry; plain destroy
    and gc report it (gc names the way out), destroy --force records destroyed unchecked."""
    created = cli.create("sh", "-c", "exit 3")
    sid = created["sessionId"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exit")
    record = cli.folder(sid) / "program.json"
    record.chmod(0o000)
    plain = cli.run("destroy", sid)
    assert plain.code == 8 and plain.error["code"] == "STORAGE_ERROR", plain.stdout
    (skipped,) = cli.run("gc").result["skippedSessions"]
    assert "destroy --force removes it" in skipped["reason"]
    forced = cli.run("destroy", sid, "--force").result
    assert forced["status"] == "destroyed" and forced["groupUnchecked"] is True and forced["exitCode"] == 3
    assert cli.run("gc").result["removedSessions"] == [sid]
