"""A token names a process by data anyone can read in /proc: only a process of our own uid
proves a group or a host ours (the Home is a trust boundary). Real processes, real kernel.

The tests with another user's processes need root (to start them); they judge as root, whose
euid differs from theirs, which is the case that matters: root running a command on a Home
whose records someone else wrote.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

OTHER_UID = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to start another user's process")


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]


def _uid(pid: int) -> int:
    line = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("Uid:"))
    return int(line.split()[1])


def _members(pgid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                found.append(int(name))
    return found


def _end(process: subprocess.Popen[bytes], *others: int) -> None:
    """End what the test started, each by its pid."""
    for pid in others:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.kill()
    process.wait()


def _group(pid: int, proof: dict[str, Any] | None, folder: Path) -> Any:
    from agent_tty.platform.types import GroupRef
    from agent_tty_plugins import linux_autogroup as plugin

    host = plugin.agent_tty_capture_host(mechanism="linux_autogroup", pid=os.getpid())
    return GroupRef("linux_autogroup", pid, proof, folder, host)


def _token(pid: int) -> dict[str, Any]:
    from agent_tty_plugins import linux_autogroup as plugin

    token = plugin.capture_token(pid, os.getpid())
    assert token is not None and token["autogroup"] is not None
    return token


def _assert_never_acted_on(group: Any, *pids: int) -> None:
    from agent_tty.platform.types import GroupVerdict
    from agent_tty_plugins import linux_autogroup as plugin

    assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.UNKNOWN
    for hook in (
        lambda: plugin.agent_tty_kill_group(group=group, signal=signal.SIGKILL),
        lambda: plugin.agent_tty_kill_group(group=group, signal=signal.SIGTERM),
    ):
        assert hook() is not GroupVerdict.OWNED
    # Cannot tell is not gone: nothing reads the group ended while it runs.
    assert plugin.agent_tty_group_alive(group=group) is True
    time.sleep(0.05)
    for pid in pids:
        assert _state(pid) not in ("Z", "X", "T", "t"), f"{pid} was signalled"


@pytest.fixture
def other_users_leader() -> Iterator[subprocess.Popen[bytes]]:
    """Another user's process that leads its own session (and so its own autogroup)."""
    process = subprocess.Popen(["sleep", "60"], start_new_session=True, user=OTHER_UID, group=OTHER_UID, extra_groups=[])
    wait_until(lambda: _uid(process.pid) == OTHER_UID, what="the other user's leader")
    yield process
    _end(process)


@as_root
def test_another_users_session_leader_is_never_owned(tmp_path: Path, other_users_leader: subprocess.Popen[bytes]) -> None:
    pid = other_users_leader.pid
    token = _token(pid)
    _assert_never_acted_on(_group(pid, token, tmp_path), pid)
    # The same leader named by pid and start time alone (no autogroup).
    _assert_never_acted_on(_group(pid, {**token, "autogroup": None}, tmp_path), pid)
    assert other_users_leader.poll() is None


@as_root
def test_another_users_process_is_not_our_host(other_users_leader: subprocess.Popen[bytes]) -> None:
    from agent_tty.platform.types import HostVerdict
    from agent_tty_plugins import linux_autogroup as plugin

    pid = other_users_leader.pid
    identity = plugin.agent_tty_capture_host(mechanism="linux_autogroup", pid=pid)
    assert identity is not None
    assert plugin.agent_tty_judge_host(mechanism="linux_autogroup", pid=pid, identity=identity) is HostVerdict.UNKNOWN
    assert plugin.agent_tty_kill_host(mechanism="linux_autogroup", pid=pid, identity=identity) is HostVerdict.UNKNOWN
    time.sleep(0.05)
    assert other_users_leader.poll() is None


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
@as_root
def test_a_member_of_our_uid_in_another_users_session_proves_nothing(tmp_path: Path) -> None:
    """The leader became another user's (exec of setpriv); a root process it left in its group
    carries the token and is of our uid, yet the group is not ours: no kill."""
    drop = f"setpriv --reuid={OTHER_UID} --regid={OTHER_UID} --clear-groups"
    leader = subprocess.Popen(["sh", "-c", f"sleep 60 & exec {drop} sleep 60"], start_new_session=True)
    wait_until(lambda: _uid(leader.pid) == OTHER_UID and len(_members(leader.pid)) == 2, what="the leader to drop its uid")
    member = next(pid for pid in _members(leader.pid) if pid != leader.pid)
    try:
        _assert_never_acted_on(_group(leader.pid, _token(leader.pid), tmp_path), leader.pid, member)
    finally:
        _end(leader, member)


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
@as_root
def test_another_users_member_keeps_our_group_alive_but_proves_nothing(tmp_path: Path) -> None:
    """As with a setuid-root helper of the program: while our leader runs, the group is ours;
    once only the other user's member is left, the group reads "cannot tell" (alive, no kill)."""
    from agent_tty.platform.types import GroupVerdict
    from agent_tty_plugins import linux_autogroup as plugin

    drop = f"setpriv --reuid={OTHER_UID} --regid={OTHER_UID} --clear-groups"
    leader = subprocess.Popen(["sh", "-c", f"{drop} sleep 60 & wait"], start_new_session=True)
    wait_until(lambda: any(_uid(pid) == OTHER_UID for pid in _members(leader.pid) if pid != leader.pid), what="the member")
    member = next(pid for pid in _members(leader.pid) if pid != leader.pid)
    try:
        group = _group(leader.pid, _token(leader.pid), tmp_path)
        assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.OWNED
        leader.kill()  # our leader only, by pid
        leader.wait()
        _assert_never_acted_on(group, member)
    finally:
        _end(leader, member)


def test_a_leader_of_our_own_uid_is_still_owned_and_killed(tmp_path: Path) -> None:
    from agent_tty.platform.types import GroupVerdict, HostVerdict
    from agent_tty_plugins import linux_autogroup as plugin

    child = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        token = _token(child.pid)
        leader_only = _group(child.pid, {**token, "autogroup": None}, tmp_path)
        assert plugin.agent_tty_judge_group(group=leader_only) is GroupVerdict.OWNED
        group = _group(child.pid, token, tmp_path)
        assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.OWNED
        identity = plugin.agent_tty_capture_host(mechanism="linux_autogroup", pid=os.getpid())
        assert plugin.agent_tty_judge_host(mechanism="linux_autogroup", pid=os.getpid(), identity=identity) is HostVerdict.ALIVE
        assert plugin.agent_tty_kill_group(group=group, signal=signal.SIGKILL) is GroupVerdict.OWNED
        child.wait(timeout=5)
        assert plugin.agent_tty_group_alive(group=group) is False
    finally:
        _end(child)
