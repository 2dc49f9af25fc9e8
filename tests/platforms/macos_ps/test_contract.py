"""macos_ps keeps the plugin contract and proves what it kills, on real processes of this OS
(it runs on Linux and macOS alike); the darwin-only branches run with sys.platform patched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# psutil picks its backend by sys.platform at import: load it for the real system before any
# test patches sys.platform to darwin (the probe on Linux only looks for it, never imports it).
psutil = pytest.importorskip("psutil")

pytestmark = pytest.mark.skipif(sys.platform not in ("darwin",) and not sys.platform.startswith("linux"), reason="POSIX")
M = "macos_ps"


def _session_leader(*argv: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(list(argv or ("sleep", "30")), start_new_session=True)


def _wait_leads(pid: int) -> None:
    deadline = time.monotonic() + 5
    while os.getsid(pid) != pid:
        assert time.monotonic() < deadline, "the child never called setsid"
        time.sleep(0.005)


def test_contract() -> None:
    import agent_tty_plugins.macos_ps as plugin
    from agent_tty.platform.contract import check_plugin

    result = check_plugin(plugin, M)
    assert result.usable, result.reason


@pytest.mark.parametrize(("platform", "usable", "rank"), [("darwin", True, 30), ("linux", True, 10), ("win32", False, 30)])
def test_probe_ranks_by_platform(monkeypatch: pytest.MonkeyPatch, platform: str, usable: bool, rank: int) -> None:
    import agent_tty_plugins.macos_ps as plugin

    monkeypatch.setattr(sys, "platform", platform)
    result = plugin.agent_tty_probe()
    assert (result.usable, result.rank) == (usable, rank), result
    assert rank < 50 or platform == "darwin"  # below linux_autogroup on Linux: only when pinned


def test_probe_without_psutil_is_unusable_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_tty_plugins.macos_ps as plugin

    monkeypatch.setitem(sys.modules, "psutil", None)  # import psutil raises ImportError
    monkeypatch.setattr(sys, "platform", "darwin")
    result = plugin.agent_tty_probe()
    assert result.usable is False and "psutil" in result.reason


def test_the_plugin_imports_without_psutil() -> None:
    """Commands that only list sessions load every built-in plugin: none may import psutil."""
    code = "import sys; import agent_tty_plugins.macos_ps; assert 'psutil' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_leader_and_start_time_prove_the_group(tmp_path: Path) -> None:
    from agent_tty.platform.types import GroupRef, GroupVerdict
    from agent_tty_plugins import macos_ps as plugin

    child = _session_leader()
    _wait_leads(child.pid)
    # Linux counts start times in clock ticks (10 ms): a pid is never reused within one, but
    # two children started in the same tick share it.
    time.sleep(0.05)
    stranger = _session_leader()
    try:
        _wait_leads(stranger.pid)
        proof = plugin.agent_tty_capture_program(mechanism=M, pid=child.pid, host_pid=os.getpid()).proof
        assert proof is not None and isinstance(proof["startTime"], float)
        ours = GroupRef(M, child.pid, proof, tmp_path)
        assert plugin.agent_tty_judge_group(group=ours) is GroupVerdict.OWNED
        # The proof pointed at another session leader: another start time, no kill (R15).
        forged = GroupRef(M, stranger.pid, proof, tmp_path)
        assert plugin.agent_tty_kill_group(group=forged, signal=signal.SIGKILL) is GroupVerdict.UNPROVEN
        assert plugin.agent_tty_group_alive(group=forged) is False
        # A host whose folder was removed still ends its own unreaped child's group (ADR 0024).
        removed = GroupRef(M, child.pid, proof, tmp_path / "removed")
        assert plugin.agent_tty_judge_group(group=removed) is GroupVerdict.OWNED
        # FallbackNeedsFolder: anyone else's record of a removed folder is not acted on.
        spawn = "import subprocess; p = subprocess.Popen(['sleep', '60'], start_new_session=True); print(p.pid, flush=True); p.wait()"
        parent = subprocess.Popen([sys.executable, "-c", spawn], stdout=subprocess.PIPE, text=True)  # its child is not ours
        assert parent.stdout is not None
        orphan_pid = int(parent.stdout.readline())
        try:
            _wait_leads(orphan_pid)
            orphan_proof = plugin.agent_tty_capture_program(mechanism=M, pid=orphan_pid, host_pid=os.getpid()).proof
            assert orphan_proof is not None
            assert plugin.agent_tty_judge_group(group=GroupRef(M, orphan_pid, orphan_proof, tmp_path)) is GroupVerdict.OWNED
            gone = GroupRef(M, orphan_pid, orphan_proof, tmp_path / "removed")
            assert plugin.agent_tty_kill_group(group=gone, signal=signal.SIGKILL) is GroupVerdict.GONE
            os.kill(orphan_pid, 0)  # still there: nothing was signalled
        finally:
            os.kill(orphan_pid, signal.SIGKILL)  # ours: started above
            parent.wait(10)
        # A record on another clock (another psutil) or without proof cannot be compared.
        other_clock = GroupRef(M, child.pid, {**proof, "clock": "elsewhere"}, tmp_path)
        assert plugin.agent_tty_kill_group(group=other_clock, signal=signal.SIGKILL) is GroupVerdict.UNKNOWN
        assert plugin.agent_tty_judge_group(group=GroupRef(M, child.pid, None, tmp_path)) is GroupVerdict.UNKNOWN
        assert child.poll() is None and stranger.poll() is None
        assert plugin.agent_tty_kill_group(group=ours, signal=signal.SIGKILL) is GroupVerdict.OWNED
        child.wait(timeout=5)
        assert plugin.agent_tty_group_alive(group=ours) is False
        assert plugin.agent_tty_judge_group(group=ours) is GroupVerdict.GONE
    finally:
        for process in (child, stranger):
            process.kill()
            process.wait()


def test_what_the_leader_left_in_its_session_is_proven_and_killed(tmp_path: Path) -> None:
    from agent_tty.platform.types import GroupRef, GroupVerdict
    from agent_tty_plugins import macos_ps as plugin
    from agent_tty_plugins.macos_ps import procs

    pid_file = tmp_path / "left.pid"
    leader = _session_leader("sh", "-c", f"sleep 30 & echo $! > {pid_file}; sleep 0.3")
    try:
        _wait_leads(leader.pid)
        proof = plugin.agent_tty_capture_program(mechanism=M, pid=leader.pid, host_pid=os.getpid()).proof
        assert proof is not None
        leader.wait(timeout=5)  # reaped as the host reaps: only the process it left runs
        reaped = plugin.agent_tty_capture_reap(mechanism=M, pid=leader.pid)
        left = int(pid_file.read_text())
        # ReapDatesMembers: without the moment of the reap, nothing tells the process left from
        # a session that took the id after the program's ended: never signalled.
        undated = GroupRef(M, leader.pid, proof, tmp_path)
        assert plugin.agent_tty_judge_group(group=undated) is GroupVerdict.AMBIGUOUS
        assert plugin.agent_tty_kill_group(group=undated, signal=signal.SIGKILL) is GroupVerdict.AMBIGUOUS
        assert plugin.agent_tty_group_alive(group=undated) is True
        # A reap recorded before the member started: it may have taken the id since.
        early = GroupRef(M, leader.pid, proof, tmp_path, reaped={**reaped, "reapedAt": proof["startTime"] - 1})
        assert plugin.agent_tty_kill_group(group=early, signal=signal.SIGKILL) is GroupVerdict.AMBIGUOUS
        state = procs.read(left)
        assert state is not None and state.live, "a member the proof cannot date was signalled"
        if "bootId" in reaped:  # a reap of another boot: nothing of the program survived it
            other = GroupRef(M, leader.pid, proof, tmp_path, reaped={**reaped, "bootId": "another-boot"})
            assert plugin.agent_tty_judge_group(group=other) is GroupVerdict.UNPROVEN
        group = GroupRef(M, leader.pid, proof, tmp_path, reaped=reaped)
        assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.OWNED
        assert plugin.agent_tty_group_alive(group=group) is True
        assert plugin.agent_tty_kill_group(group=group, signal=signal.SIGKILL) is GroupVerdict.OWNED
        deadline = time.monotonic() + 5
        while plugin.agent_tty_group_alive(group=group):
            assert time.monotonic() < deadline, "the process the leader left survived"
            time.sleep(0.02)
    finally:
        leader.kill()
        leader.wait()
        try:
            os.kill(left, signal.SIGKILL)  # ours: started by this test
        except (ProcessLookupError, NameError):
            pass


@pytest.mark.parametrize("platform", ["darwin", "linux"])
def test_a_zombie_reads_alive_until_reaped_on_macos(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, platform: str) -> None:
    from agent_tty.platform.types import GroupRef, GroupVerdict
    from agent_tty_plugins import macos_ps as plugin
    from agent_tty_plugins.macos_ps import procs

    if platform == "linux" and not sys.platform.startswith("linux"):
        pytest.skip("the Linux rule scans /proc-backed psutil states")
    child = _session_leader("sleep", "0.2")
    try:
        _wait_leads(child.pid)
        proof = plugin.agent_tty_capture_program(mechanism=M, pid=child.pid, host_pid=os.getpid()).proof
        group = GroupRef(M, child.pid, proof, tmp_path)
        deadline = time.monotonic() + 5
        while (state := procs.read(child.pid)) is not None and state.live:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        # Ended, not reaped: a zombie, which no verdict counts as a live member.
        assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.GONE
        monkeypatch.setattr(sys, "platform", platform)
        assert plugin.agent_tty_group_alive(group=group) is (platform == "darwin")
    finally:
        child.wait()
    assert plugin.agent_tty_group_alive(group=group) is False  # reaped


def test_a_group_we_may_not_signal_never_reads_gone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """ProbeCountsDeniedGroup: no member in view, but kill(-pgid, 0) fails with EPERM (another
    user's processes, hidden by hidepid=2 on Linux): alive, and no kill is sent."""
    from agent_tty.platform.types import GroupRef, GroupVerdict
    from agent_tty_plugins import macos_ps as plugin
    from agent_tty_plugins._posix import groups
    from agent_tty_plugins.macos_ps import procs

    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(groups, "signal_group", lambda pgid, sig: sent.append((pgid, sig)) or groups.Probe.DENIED)
    monkeypatch.setattr(procs, "scan_group", lambda pgid: procs.Scan())
    group = GroupRef(M, 2**22 + 11, {"startTime": 1.0, "clock": procs.clock()}, tmp_path)
    assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.GONE
    assert plugin.agent_tty_group_alive(group=group) is True
    assert plugin.agent_tty_kill_group(group=group, signal=signal.SIGKILL) is GroupVerdict.GONE
    assert all(sig in (0, signal.SIGSTOP, signal.SIGCONT) for _pgid, sig in sent), sent


def test_host_identity_names_the_session_and_tells_a_reused_pid_apart() -> None:
    from agent_tty.platform.types import HostVerdict
    from agent_tty_plugins import macos_ps as plugin

    # A stand-in whose command line reads like a host's: `python -c ... -m agent_tty.host SID`.
    host = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "-m", "agent_tty.host", "sid1"])
    try:
        deadline = time.monotonic() + 5
        while (identity := plugin.agent_tty_capture_host(mechanism=M, pid=host.pid)) is None or identity["sessionId"] is None:
            assert time.monotonic() < deadline, identity
            time.sleep(0.02)
        assert identity["sessionId"] == "sid1"
        judge = plugin.agent_tty_judge_host
        assert judge(mechanism=M, pid=host.pid, identity=identity) is HostVerdict.ALIVE
        # Another start time at the pid: the host ended and the pid was taken (R19).
        other = {**identity, "startTime": identity["startTime"] + 1}
        assert judge(mechanism=M, pid=host.pid, identity=other) is HostVerdict.DEAD
        assert plugin.agent_tty_kill_host(mechanism=M, pid=host.pid, identity=other) is HostVerdict.DEAD
        # The same process, but its command line names another session: not proof either way.
        assert judge(mechanism=M, pid=host.pid, identity={**identity, "sessionId": "sid2"}) is HostVerdict.UNKNOWN
        assert plugin.agent_tty_kill_host(mechanism=M, pid=host.pid, identity={**identity, "sessionId": "sid2"}) is HostVerdict.UNKNOWN
        assert judge(mechanism=M, pid=host.pid, identity={"startTime": 5}) is HostVerdict.UNKNOWN
        assert host.poll() is None
        assert plugin.agent_tty_kill_host(mechanism=M, pid=host.pid, identity=identity) is HostVerdict.ALIVE
        host.wait(timeout=5)
        assert judge(mechanism=M, pid=host.pid, identity=identity) is HostVerdict.DEAD
    finally:
        host.kill()
        host.wait()
    assert plugin.agent_tty_judge_host(mechanism=M, pid=2**22 + 3, identity=None) is HostVerdict.DEAD


def test_runs_inside_compares_group_session_and_terminal() -> None:
    from agent_tty_plugins import macos_ps as plugin
    from agent_tty_plugins.macos_ps import inside

    assert plugin.agent_tty_runs_inside(mechanism=M, program_pid=os.getpgrp(), host_identity=None) is True
    # A program in a session of its own without a terminal shares nothing with us, also when
    # we have no terminal either.
    child = _session_leader()
    try:
        _wait_leads(child.pid)
        assert plugin.agent_tty_runs_inside(mechanism=M, program_pid=child.pid, host_identity=None) is False
    finally:
        child.kill()
        child.wait()
    assert inside.runs_inside(2**22 + 5) is False  # no such program: nothing to share
    assert plugin.agent_tty_leave_program_group(mechanism=M) is True


def test_runs_inside_errs_towards_inside(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_tty_plugins.macos_ps import inside, procs

    def refused(pid: int) -> str | None:
        raise PermissionError(pid)

    monkeypatch.setattr(procs, "terminal", refused)
    child = _session_leader()
    try:
        _wait_leads(child.pid)
        assert inside.runs_inside(child.pid) is True
    finally:
        child.kill()
        child.wait()
