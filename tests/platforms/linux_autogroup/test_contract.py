"""linux_autogroup keeps the plugin contract and proves what it kills."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


def test_contract() -> None:
    import agent_tty_plugins.linux_autogroup as plugin
    from agent_tty.platform.contract import check_plugin

    result = check_plugin(plugin, "linux_autogroup")
    assert result.usable, result.reason


def test_token_of_a_session_leader_and_refusal_of_another_group(tmp_path: Path) -> None:
    from agent_tty_plugins import linux_autogroup as plugin
    from agent_tty.platform.types import GroupRef, GroupVerdict

    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    stranger = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        token = plugin.capture_token(child.pid, os.getpid())
        assert token is not None and token["autogroup"] is not None
        host = plugin.agent_tty_capture_host(mechanism="linux_autogroup", pid=os.getpid())
        ours = GroupRef("linux_autogroup", child.pid, token, tmp_path, host)
        assert plugin.agent_tty_judge_group(group=ours) is GroupVerdict.OWNED
        # UnsharedGroupReadsUnknown: a token without host.json names no pid space.
        assert plugin.agent_tty_judge_group(group=GroupRef("linux_autogroup", child.pid, token, tmp_path)) is GroupVerdict.UNSHARED
        # The same token pointed at another session leader: another autogroup, no kill.
        forged = GroupRef("linux_autogroup", stranger.pid, token, tmp_path, host)
        assert plugin.agent_tty_kill_group(group=forged, signal=signal.SIGKILL) is GroupVerdict.UNPROVEN
        assert stranger.poll() is None
        assert plugin.agent_tty_group_alive(group=forged) is False
        assert plugin.agent_tty_kill_group(group=ours, signal=signal.SIGKILL) is GroupVerdict.OWNED
        child.wait(timeout=5)
        assert plugin.agent_tty_group_alive(group=ours) is False
    finally:
        for process in (child, stranger):
            process.kill()
            process.wait()


def test_no_token_proves_only_a_matching_leader(tmp_path: Path) -> None:
    from agent_tty_plugins import linux_autogroup as plugin
    from agent_tty.platform.types import GroupRef, GroupVerdict

    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        token = plugin.capture_token(child.pid, os.getpid())
        assert token is not None
        leader_only = {**token, "autogroup": None}
        right = GroupRef("linux_autogroup", child.pid, leader_only, tmp_path)
        wrong_start = GroupRef("linux_autogroup", child.pid, {**leader_only, "startTime": 1}, tmp_path)
        gone_folder = GroupRef("linux_autogroup", child.pid, leader_only, tmp_path / "removed")
        # Another start time at the leader's pid: the recorded group ended, the id is someone else's.
        assert plugin.agent_tty_judge_group(group=wrong_start) is GroupVerdict.UNPROVEN
        assert plugin.agent_tty_kill_group(group=wrong_start, signal=signal.SIGKILL) is GroupVerdict.UNPROVEN
        assert plugin.agent_tty_kill_group(group=gone_folder, signal=signal.SIGKILL) is GroupVerdict.GONE
        assert child.poll() is None
        assert plugin.agent_tty_judge_group(group=right) is GroupVerdict.OWNED
    finally:
        child.kill()
        child.wait()


def test_host_identity_tells_a_reused_pid_apart() -> None:
    from agent_tty_plugins import linux_autogroup as plugin
    from agent_tty.platform.types import HostVerdict

    identity = plugin.agent_tty_capture_host(mechanism="linux_autogroup", pid=os.getpid())
    assert plugin.agent_tty_judge_host(mechanism="linux_autogroup", pid=os.getpid(), identity=identity) is HostVerdict.ALIVE
    other = {**identity, "startTime": identity["startTime"] + 1}
    assert plugin.agent_tty_judge_host(mechanism="linux_autogroup", pid=os.getpid(), identity=other) is HostVerdict.DEAD
    # kill_host refuses what it cannot prove: this very process survives.
    assert plugin.agent_tty_kill_host(mechanism="linux_autogroup", pid=os.getpid(), identity=other) is HostVerdict.DEAD
    reboot = {**identity, "bootId": "another-boot"}
    assert plugin.agent_tty_judge_host(mechanism="linux_autogroup", pid=os.getpid(), identity=reboot) is HostVerdict.DEAD
    assert plugin.agent_tty_judge_host(mechanism="linux_autogroup", pid=2**22 + 3, identity=None) is HostVerdict.DEAD


def test_a_record_of_another_boot_is_never_killed_and_reads_gone(tmp_path: Path) -> None:
    from agent_tty_plugins import linux_autogroup as plugin
    from agent_tty.platform.types import GroupRef, GroupVerdict

    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        token = plugin.capture_token(child.pid, os.getpid())
        assert token is not None
        host = plugin.agent_tty_capture_host(mechanism="linux_autogroup", pid=os.getpid())
        old = GroupRef("linux_autogroup", child.pid, {**token, "bootId": "a-previous-boot"}, tmp_path, host)
        assert plugin.agent_tty_kill_group(group=old, signal=signal.SIGKILL) is GroupVerdict.GONE
        assert plugin.agent_tty_group_alive(group=old) is False
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()


def test_refused_proc_reads_never_read_as_gone(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """hidepid=1 or a security module: a stat we may not read is a process we cannot judge."""
    from agent_tty_plugins import linux_autogroup as plugin
    from agent_tty_plugins._posix import procfs
    from agent_tty.platform.types import GroupRef, GroupVerdict

    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        token = plugin.capture_token(child.pid, os.getpid())
        host = plugin.agent_tty_capture_host(mechanism="linux_autogroup", pid=os.getpid())
        group = GroupRef("linux_autogroup", child.pid, token, tmp_path, host)
        real_read_stat = procfs.read_stat

        def refuse_child(pid):  # type: ignore[no-untyped-def]
            if int(pid) == child.pid:
                raise PermissionError(1, "Operation not permitted")
            return real_read_stat(pid)

        monkeypatch.setattr(procfs, "read_stat", refuse_child)
        assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.GONE  # nothing in view...
        assert plugin.agent_tty_group_alive(group=group) is True  # ...but the id is in use: alive
        assert plugin.agent_tty_kill_group(group=group, signal=signal.SIGKILL) is GroupVerdict.GONE
        assert child.poll() is None
        leader_only = GroupRef("linux_autogroup", child.pid, {**token, "autogroup": None}, tmp_path, host)
        assert plugin.agent_tty_judge_group(group=leader_only) is GroupVerdict.UNKNOWN
    finally:
        child.kill()
        child.wait()


def test_host_identity_without_a_boot_id_reads_unknown() -> None:
    from agent_tty_plugins import linux_autogroup as plugin
    from agent_tty.platform.types import HostVerdict

    identity = plugin.agent_tty_capture_host(mechanism="linux_autogroup", pid=os.getpid())
    broken = {k: v for k, v in identity.items() if k != "bootId"}
    assert plugin.agent_tty_judge_host(mechanism="linux_autogroup", pid=os.getpid(), identity=broken) is HostVerdict.UNKNOWN


def test_no_token_for_a_child_that_shows_the_hosts_session() -> None:
    """TokenNamesProgram: a child that does not lead its own session still shows the host's
    autogroup; its record must carry no token (nothing of the program would carry it)."""
    from agent_tty_plugins import linux_autogroup as plugin

    child = subprocess.Popen(["sleep", "30"])  # no setsid: our session, our autogroup
    try:
        assert plugin.capture_token(child.pid, os.getpid()) is None
    finally:
        child.kill()
        child.wait()
