"""A process of another user stays in the program's group: our SIGKILL cannot reach it (EPERM).
Nothing may then read the group gone (ProbeCountsDeniedGroup), record destroyed (HostWaitsForGroup)
or forget the program (ReconcileWaitsForGroup, R13). Runs in the unprivileged pass of
scripts/test, which installs the setuid-root helper tests/fixtures/root_sleeper.c, and once more
under a /proc mounted with hidepid=2 (AGENT_TTY_TEST_HIDEPID=1), where that member is missing from
every listing of /proc and only kill(-pgid, 0)'s EPERM tells that it runs."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.conftest import Cli, pid_alive, wait_until

HELPER = os.environ.get("AGENT_TTY_TEST_ROOT_SLEEPER", "")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() == 0 or not HELPER, reason="needs an unprivileged user and the setuid helper"),
]


HIDDEN = os.environ.get("AGENT_TTY_TEST_HIDEPID") == "1"


def _root_member(pgid: int, pid_file: Path) -> int | None:
    """The root member's pid while it runs. Under hidepid=2 /proc does not show it: then its pid
    comes from the file the program wrote, and signal 0's EPERM tells that it still runs."""
    if HIDDEN:
        try:
            pid = int(pid_file.read_text())
            os.kill(pid, 0)
        except PermissionError:
            return pid  # it runs (or waits to be reaped), as another user
        except (OSError, ValueError):
            return None
        return None  # the pid is ours to signal: not the root member
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


def _read_pid(pid_file: Path) -> int:
    wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the pid file")
    return int(pid_file.read_text())


def test_destroy_waits_out_a_member_it_cannot_kill(cli: Cli, tmp_path: Path) -> None:
    pid_file = tmp_path / "root-member.pid"
    created = cli.create("sh", "-c", f'trap "" HUP; {HELPER} 25 & echo $! > {pid_file}; wait')
    sid, pgid = created["sessionId"], created["childPid"]
    if HIDDEN:
        assert not any(name.isdigit() and int(name) == _read_pid(pid_file) for name in os.listdir("/proc"))
    wait_until(lambda: _root_member(pgid, pid_file), what="the root member to start")
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
    assert _root_member(pgid, pid_file) is not None
    forced = cli.run("destroy", sid, "--force")
    assert forced.code == 5 and cli.manifest(sid)["status"] == "destroying"
    if HIDDEN:
        # Hidden and, once ended, a zombie until its new parent reaps it: still "alive" to us,
        # which is the safe side of hidepid=2 (docs/lifecycle.md, limits).
        return
    # Once the other user's process ends, the session ends properly.
    wait_until(lambda: _root_member(pgid, pid_file) is None, timeout=40, what="the root member to end by itself")
    assert cli.run("destroy", sid).result["status"] == "destroyed"
