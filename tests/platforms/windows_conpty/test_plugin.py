"""windows_conpty's logic against FakeWin32 (in-memory Windows): the proof before every kill,
the verdicts, the job's life, the host's identity. Runs on Linux; nothing here is real Windows."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

import agent_tty_plugins.windows_conpty as plugin
from agent_tty.platform.types import GroupRef, GroupVerdict, HostVerdict, SpawnRequest, Stop
from agent_tty_plugins.windows_conpty import job
from tests.platforms.windows_conpty.fake_win32 import ME, OTHER, FakeWin32

M = plugin.MECHANISM


def _spawn(win: FakeWin32, tmp_path: Path, session: str = "s1") -> tuple[object, GroupRef]:
    folder = tmp_path / session
    folder.mkdir()
    handle = plugin.agent_tty_spawn(request=SpawnRequest(M, ("cmd.exe",), {}, None, 80, 24, session, str(tmp_path)))
    proof = plugin.agent_tty_capture_program(mechanism=M, pid=handle.pid, host_pid=1).proof
    return handle, GroupRef(M, handle.pid, proof, folder, None, session)


def test_probe_off_windows_says_not_windows() -> None:
    if sys.platform == "win32":
        pytest.skip("this is Windows")
    from agent_tty_plugins.windows_conpty import layer

    assert layer.installed() is None  # no test left a layer behind
    probe = plugin.agent_tty_probe()
    assert (probe.usable, probe.reason) == (False, "not Windows")


def test_the_manager_never_chooses_it_off_windows(tmp_path: Path) -> None:
    if sys.platform == "win32":
        pytest.skip("this is Windows")
    from agent_tty.platform.manager import Platform

    platform = Platform(tmp_path)
    # A built-in for another system stays unloaded, even through its entry point.
    assert M not in platform.load_errors
    assert platform.choose().name != M
    assert M not in {p.name for p in platform.probes()}


def test_spawn_makes_a_named_job_held_by_the_host(win: FakeWin32, tmp_path: Path) -> None:
    handle, group = _spawn(win, tmp_path)
    assert group.proof is not None
    name = group.proof["job"]
    assert name.startswith(f"Local\\agent-tty-{ME}-s1-") and len(name.rsplit("-", 1)[1]) == 32
    assert win.procs[handle.pid].job == name  # in the job from the start
    assert win.jobs[name].handles == 1  # the host's
    assert group.proof["created"] == win.procs[handle.pid].created
    handle.close()


def test_owned_while_a_member_runs_then_gone(win: FakeWin32, tmp_path: Path) -> None:
    handle, group = _spawn(win, tmp_path)
    child = win.start(handle.pid + 100, job=group.proof["job"])
    assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.OWNED
    win.end(handle.pid)  # the leader ends; what it started still runs in the job
    assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.OWNED
    assert plugin.agent_tty_group_alive(group=group) is True
    win.end(child.pid)
    assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.GONE
    assert plugin.agent_tty_group_alive(group=group) is False
    handle.close()


def test_kill_ends_every_member_in_one_call(win: FakeWin32, tmp_path: Path) -> None:
    handle, group = _spawn(win, tmp_path)
    others = [win.start(handle.pid + 100 + 4 * i, job=group.proof["job"]) for i in range(3)]
    assert plugin.agent_tty_kill_group(group=group, signal=Stop.KILL) is GroupVerdict.OWNED
    assert win.calls == [("terminate_job", group.proof["job"])]
    assert all(p.exit_code == 128 + 9 for p in [win.procs[handle.pid], *others])
    assert handle.poll_exit().exit_code == 137
    assert plugin.agent_tty_release_group(group=group) is True
    assert group.proof["job"] not in win.jobs  # the host's handle closed: the name is gone
    assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.GONE
    handle.close()


def test_signal_zero_only_judges(win: FakeWin32, tmp_path: Path) -> None:
    handle, group = _spawn(win, tmp_path)
    assert plugin.agent_tty_kill_group(group=group, signal=0) is GroupVerdict.OWNED
    assert win.calls == [] and handle.poll_exit() is None
    handle.close()


def test_no_proof_never_kills(win: FakeWin32, tmp_path: Path) -> None:
    stranger = win.start(4000)
    group = GroupRef(M, stranger.pid, None, tmp_path, None, "s1")
    assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.UNPROVEN
    assert plugin.agent_tty_kill_group(group=group, signal=Stop.KILL) is GroupVerdict.UNPROVEN
    win.end(stranger.pid)
    assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.GONE
    assert win.calls == []


def test_a_proof_copied_into_another_record_proves_nothing(win: FakeWin32, tmp_path: Path) -> None:
    handle, group = _spawn(win, tmp_path)
    stranger = win.start(5000)
    planted = GroupRef(M, stranger.pid, group.proof, tmp_path / "other", None, "other")
    swapped = GroupRef(M, stranger.pid, group.proof, group.folder, None, "s1")
    for forged in (planted, swapped):
        assert plugin.agent_tty_kill_group(group=forged, signal=Stop.KILL) is GroupVerdict.UNPROVEN
    assert win.calls == [] and stranger.exit_code is None and handle.poll_exit() is None
    handle.close()


def test_a_reused_leader_pid_does_not_matter(win: FakeWin32, tmp_path: Path) -> None:
    """The kill goes to the job, never to a pid: a process that took the leader's pid is spared."""
    handle, group = _spawn(win, tmp_path)
    win.start(handle.pid + 100, job=group.proof["job"])
    win.end(handle.pid)
    taker = win.start(handle.pid)  # the leader's pid, reused outside the job
    assert plugin.agent_tty_kill_group(group=group, signal=Stop.KILL) is GroupVerdict.OWNED
    assert taker.exit_code is None
    handle.close()


def test_another_users_job_with_the_name_is_not_ours(win: FakeWin32, tmp_path: Path) -> None:
    handle, group = _spawn(win, tmp_path)
    name = group.proof["job"]
    plugin.agent_tty_kill_group(group=group, signal=Stop.KILL)
    plugin.agent_tty_release_group(group=group)
    for readers in ({OTHER}, {OTHER, ME}):  # closed to us, or open to us but not ours
        win.squat(name, OTHER, readers)
        win.start(7000 + len(readers), user=OTHER, job=name)
        assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.UNKNOWN
        assert plugin.agent_tty_kill_group(group=group, signal=Stop.KILL) is GroupVerdict.UNKNOWN
        assert plugin.agent_tty_group_alive(group=group) is True  # a wait never passes on a guess
        del win.jobs[name]
    assert win.calls == [("terminate_job", name)]
    handle.close()


def test_another_logon_session_reads_unshared(win: FakeWin32, tmp_path: Path) -> None:
    handle, group = _spawn(win, tmp_path)
    win.logon = 2  # a CLI in another logon session: its Local\ namespace has no such name
    assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.UNSHARED
    assert plugin.agent_tty_kill_group(group=group, signal=Stop.KILL) is GroupVerdict.UNSHARED
    assert plugin.agent_tty_group_alive(group=group) is True and win.calls == []
    handle.close()


def test_release_keeps_a_running_job(win: FakeWin32, tmp_path: Path) -> None:
    handle, group = _spawn(win, tmp_path)
    assert plugin.agent_tty_release_group(group=group) is False  # closing now would kill
    assert win.jobs[group.proof["job"]].handles == 1
    handle.close()


def test_the_hosts_last_handle_ends_the_job(win: FakeWin32, tmp_path: Path) -> None:
    """KILL_ON_JOB_CLOSE: a host that dies (its handles close) leaves nothing of the program."""
    handle, group = _spawn(win, tmp_path)
    child = win.start(handle.pid + 100, job=group.proof["job"])
    held = job._held[handle.pid]
    win.close_handle(held.handle)  # what the host's death does
    assert child.exit_code is not None and handle.poll_exit() is not None
    assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.GONE
    handle.close()


def test_a_taken_job_name_fails_the_spawn(win: FakeWin32, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(job.secrets, "token_hex", lambda _n: "0" * 32)
    win.squat(f"Local\\agent-tty-{ME}-s1-{'0' * 32}", OTHER, {OTHER})
    with pytest.raises(FileExistsError):
        _spawn(win, tmp_path)
    assert job._held == {}


def test_host_identity(win: FakeWin32) -> None:
    host = win.start(6000, argv=["python", "-m", "agent_tty.host", "s1", "10", "/home"])
    identity = plugin.agent_tty_capture_host(mechanism=M, pid=host.pid)
    assert identity == {"created": host.created, "sessionId": "s1"}
    assert plugin.agent_tty_judge_host(mechanism=M, pid=host.pid, identity=identity) is HostVerdict.ALIVE
    assert plugin.agent_tty_judge_host(mechanism=M, pid=host.pid, identity=None) is HostVerdict.UNKNOWN
    other_session = {**identity, "sessionId": "s2"}
    assert plugin.agent_tty_kill_host(mechanism=M, pid=host.pid, identity=other_session) is HostVerdict.UNKNOWN
    assert win.calls == []
    assert plugin.agent_tty_kill_host(mechanism=M, pid=host.pid, identity=identity) is HostVerdict.ALIVE
    assert win.calls == [("terminate_process", host.pid)] and host.exit_code is not None
    assert plugin.agent_tty_judge_host(mechanism=M, pid=host.pid, identity=identity) is HostVerdict.DEAD
    taker = win.start(host.pid, argv=host.argv)  # the pid reused, same command line
    assert plugin.agent_tty_judge_host(mechanism=M, pid=host.pid, identity=identity) is HostVerdict.DEAD
    assert plugin.agent_tty_kill_host(mechanism=M, pid=host.pid, identity=identity) is HostVerdict.DEAD
    assert taker.exit_code is None
    del win.procs[host.pid]
    assert plugin.agent_tty_judge_host(mechanism=M, pid=host.pid, identity=identity) is HostVerdict.DEAD


def test_another_users_process_is_no_host_of_ours(win: FakeWin32) -> None:
    host = win.start(6100, user=OTHER, argv=["python", "-m", "agent_tty.host", "s1"])
    identity = {"created": host.created, "sessionId": "s1"}
    assert plugin.agent_tty_kill_host(mechanism=M, pid=host.pid, identity=identity) is HostVerdict.UNKNOWN
    assert win.calls == []


def test_handle_reads_writes_and_interrupts(win: FakeWin32, tmp_path: Path) -> None:
    handle, group = _spawn(win, tmp_path)
    assert handle.read(100) == b""  # nothing yet
    assert handle.write(b"dir\r") == 4
    handle.resize(100, 30)
    assert handle.signal_foreground(Stop.INTERRUPT) == handle.pid
    assert handle.signal_foreground(Stop.KILL) is None  # not a keyboard signal: the proof path
    pty = handle.pty
    assert pty.written == [b"dir\r", b"\x03"] and pty.size == (100, 30)
    win.end(handle.pid, 3)
    deadline = time.monotonic() + 2
    while handle.read(100) is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    # The console's pipe is still open (FakePty, as ConPTY): the watcher ended the output.
    assert not pty.closed and handle.read(100) is None
    assert handle.poll_exit().exit_code == 3
    handle.close()
    handle.close()  # twice is harmless


def test_inside_a_job_the_destroy_cannot_leave(win: FakeWin32) -> None:
    assert plugin.agent_tty_runs_inside(mechanism=M, program_pid=1, host_identity=None) is False
    assert plugin.agent_tty_leave_program_group(mechanism=M) is True
    win.in_job = True
    assert plugin.agent_tty_runs_inside(mechanism=M, program_pid=1, host_identity=None) is True
    assert plugin.agent_tty_leave_program_group(mechanism=M) is False


def test_only_win32_touches_windows() -> None:
    """The one module a fake replaces is the one that imports ctypes, winpty and psutil."""
    folder = Path(plugin.__file__).parent
    for path in sorted(folder.glob("*.py")):
        text = path.read_text()
        touches = any(word in text for word in ("import ctypes", "winpty import", "import winpty", "import psutil", "windll", "WinDLL"))
        assert touches == (path.name == "win32.py"), path.name
