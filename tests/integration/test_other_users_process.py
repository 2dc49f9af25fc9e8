"""A process of another user stays in the program's group: our SIGKILL cannot reach it (EPERM).
Nothing may then read the group gone (ProbeCountsDeniedGroup), record destroyed (HostWaitsForGroup)
or forget the program (ReconcileWaitsForGroup, R13). Runs in the unprivileged pass of
scripts/test, which installs the setuid-root helper tests/fixtures/root_sleeper.c."""

from __future__ import annotations

import os
import time

import pytest

from tests.conftest import Cli, pid_alive, wait_until

HELPER = os.environ.get("AGENT_TTY_TEST_ROOT_SLEEPER", "")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() == 0 or not HELPER, reason="needs an unprivileged user and the setuid helper"),
]


def _root_member(pgid: int) -> int | None:
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = open(f"/proc/{name}/stat").read().rpartition(")")[2].split()
                uid = os.stat(f"/proc/{name}").st_uid
            except OSError:
                continue
            if int(fields[2]) == pgid and uid == 0 and fields[0] != "Z":
                return int(name)
    return None


def test_destroy_waits_out_a_member_it_cannot_kill(cli: Cli) -> None:
    created = cli.create("sh", "-c", f'trap "" HUP; {HELPER} 25 & wait')
    sid, pgid = created["sessionId"], created["childPid"]
    wait_until(lambda: _root_member(pgid), what="the root member to start")
    started = time.monotonic()
    done = cli.run("destroy", sid)
    assert done.code == 5 and done.error["code"] == "HOST_TIMEOUT", done.stdout
    assert time.monotonic() - started < 15
    manifest = cli.manifest(sid)
    assert manifest["status"] == "destroying" and manifest["childPid"] == pgid, manifest
    wait_until(lambda: not pid_alive(created["hostPid"]), timeout=15, what="the host to give up and end")
    # A reconcile of the dead host kills what it can, waits, and writes nothing (R13).
    listed = cli.run("list").result["sessions"][0]
    assert listed["status"] == "destroying" and cli.manifest(sid)["childPid"] == pgid
    assert _root_member(pgid) is not None
    forced = cli.run("destroy", sid, "--force")
    assert forced.code == 5 and cli.manifest(sid)["status"] == "destroying"
    # Once the other user's process ends, the session ends properly.
    wait_until(lambda: _root_member(pgid) is None, timeout=40, what="the root member to end by itself")
    assert cli.run("destroy", sid).result["status"] == "destroyed"
