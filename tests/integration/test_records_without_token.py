"""A program.json without an autogroup token proves only the leader (docs/adr/0005)."""

from __future__ import annotations

import json
import os
import signal

import pytest

from tests.conftest import Cli, group_members, pid_alive, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def cli(cli: Cli) -> Cli:
    cli.pin = "linux_autogroup"  # these records are linux_autogroup's
    return cli


def _strip_token(cli: Cli, sid: str) -> None:
    path = cli.folder(sid) / "program.json"
    record = json.loads(path.read_text())
    record["proof"]["autogroup"] = None
    path.write_text(json.dumps(record))


def test_force_destroy_kills_a_proven_leader(cli: Cli) -> None:
    created = cli.create("sh", "-c", 'trap "" HUP; exec sleep 300')
    sid = created["sessionId"]
    _strip_token(cli, sid)
    os.kill(created["hostPid"], signal.SIGKILL)
    done = cli.run("destroy", sid, "--force")
    assert done.code == 0, done.stdout
    assert not pid_alive(created["childPid"])


def test_leftover_of_a_tokenless_record_is_never_killed(cli: Cli) -> None:
    created = cli.create("sh", "-c", 'trap "" HUP; sleep 300 & exit 0')
    sid, pgid = created["sessionId"], created["childPid"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exited")
    _strip_token(cli, sid)
    (leftover,) = group_members(pgid)
    try:
        done = cli.run("destroy", sid)
        assert done.code == 5 and done.error["code"] == "HOST_TIMEOUT"
        assert pid_alive(leftover), "a process we cannot prove must not be killed"
        assert cli.manifest(sid)["status"] == "exited"
        # gc removes what it cannot prove runs (nothing proves the leftover is the session's).
        assert cli.run("gc").result["removedSessions"] == [sid]
    finally:
        os.kill(leftover, signal.SIGKILL)  # started by this test's session, ended by pid
