"""The Home is a trust boundary: a planted program.json never makes linux_cgroup act outside
this user's own leaves (real kernel; the plugin's hooks called directly, as a CLI would).

Each planted proof names, by a path that is not one of our leaves, a folder holding a
`cgroup.procs` that lists a process we started and a `cgroup.freeze` that is a symlink to a
victim file: every hook must leave the process running, the victim unchanged, and read no
OWNED. A leaf the plugin's own spawn made is still proven, killed and released.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import default_mechanism, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

VICTIM_TEXT = "precious\n"
ESCAPE = "/.." * 12
"""Climbs from any cgroup2 mount point to / (".." of / is / itself)."""


def _mount() -> Path:
    from agent_tty_plugins.linux_cgroup import cgroup2_mount

    mount = cgroup2_mount()
    if mount is None:
        pytest.skip("no cgroup2 hierarchy is mounted")
    return mount


def _makes_leaves_as_root() -> bool:
    return os.geteuid() == 0 and default_mechanism() == "linux_cgroup"


as_root = pytest.mark.skipif(not _makes_leaves_as_root(), reason="needs root that may make cgroup leaves")


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """An unrelated process that leads its own session: what a planted record aims at."""
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    yield process
    process.kill()  # by pid: ours
    process.wait()


def _home_key(home: Path) -> str:
    from agent_tty_plugins.linux_cgroup import _home_key as key

    return key(str(home))


def _group(home: Path, sid: str, path: str, cgroup_id: int, pid: int, mechanism: str = "linux_cgroup") -> Any:
    from agent_tty.platform.types import GroupRef
    from agent_tty_plugins._posix import procfs

    folder = home / "sessions" / sid
    folder.mkdir(parents=True, exist_ok=True)
    # rootId: the root our capture would record, so a missing path of our shape reads gone.
    proof = {"bootId": procfs.boot_id(), "cgroup": {"path": path, "id": cgroup_id, "rootId": _mount().stat().st_ino}}
    return GroupRef(mechanism, pid, proof, folder, None, sid)


def _fake_leaf(folder: Path, sleeper_pid: int, victim: Path) -> Path:
    """A plain folder that looks like a leaf: its procs list the sleeper, its freeze is a symlink."""
    folder.mkdir(parents=True)
    (folder / "cgroup.procs").write_text(f"{sleeper_pid}\n")
    (folder / "cgroup.events").write_text("populated 1\nfrozen 0\n")
    (folder / "cgroup.freeze").symlink_to(victim)
    return folder


def _every_hook(group: Any, home: Path) -> dict[str, Any]:
    from agent_tty_plugins import linux_cgroup as plugin

    return {
        "judge": plugin.agent_tty_judge_group(group=group),
        "kill": plugin.agent_tty_kill_group(group=group, signal=signal.SIGKILL),
        "term": plugin.agent_tty_kill_group(group=group, signal=signal.SIGTERM),
        "alive": plugin.agent_tty_group_alive(group=group),
        "release": plugin.agent_tty_release_group(group=group),
        "sweep": plugin.agent_tty_sweep(home=str(home), session_ids=[]),
    }


def _assert_untouched(verdicts: dict[str, Any], sleeper: subprocess.Popen[bytes], victim: Path) -> None:
    from agent_tty.platform.types import GroupVerdict

    time.sleep(0.05)
    assert sleeper.poll() is None, f"the planted record got an unrelated process killed: {verdicts}"
    assert _state(sleeper.pid) not in ("T", "t"), "the planted record got an unrelated process stopped"
    assert victim.read_text() == VICTIM_TEXT, "a write through the planted cgroup.freeze symlink"
    assert verdicts["judge"] is not GroupVerdict.OWNED, verdicts
    assert all(verdicts[k] is not GroupVerdict.OWNED for k in ("kill", "term")), verdicts


@pytest.mark.parametrize("shaped", [False, True], ids=["any-tail", "our-tail"])
def test_a_path_that_climbs_out_of_cgroupfs_is_never_acted_on(
    tmp_path: Path, sleeper: subprocess.Popen[bytes], shaped: bool
) -> None:
    """The issue's report: `..` leads from the cgroup2 mount into a folder anyone may write."""
    _mount()
    home, sid = tmp_path / "home", "planted0001"
    victim = tmp_path / "victim"
    victim.write_text(VICTIM_TEXT)
    # With our tail the path has the right last three folders: only the ".." gives it away.
    tail = f"agent-tty-{os.geteuid()}/{_home_key(home)}/{sid}" if shaped else "shared/fakeleaf"
    fake = _fake_leaf(tmp_path / "shared" / tail, sleeper.pid, victim)
    group = _group(home, sid, ESCAPE + str(fake), fake.stat().st_ino, sleeper.pid)
    verdicts = _every_hook(group, home)
    _assert_untouched(verdicts, sleeper, victim)
    assert fake.is_dir(), "release removed a folder outside cgroupfs"


def test_an_empty_planted_folder_is_never_removed(tmp_path: Path, sleeper: subprocess.Popen[bytes]) -> None:
    """release removes an empty leaf (and then its Home's folder): never one a record names."""
    _mount()
    home, sid = tmp_path / "home", "planted0002"
    target = tmp_path / "keep" / "empty"
    target.mkdir(parents=True)
    group = _group(home, sid, ESCAPE + str(target), target.stat().st_ino, sleeper.pid)
    from agent_tty_plugins import linux_cgroup as plugin

    plugin.agent_tty_release_group(group=group)
    assert target.is_dir() and target.parent.is_dir()


def test_a_path_of_another_shape_is_not_read_gone(tmp_path: Path, sleeper: subprocess.Popen[bytes]) -> None:
    """A missing folder proves the leaf gone only when the path is one of our leaves; else the
    group is judged as linux_autogroup would (here: a leader without a start time, unknown)."""
    from agent_tty.platform.types import GroupVerdict
    from agent_tty_plugins import linux_cgroup as plugin

    _mount()
    home, sid = tmp_path / "home", "planted0003"
    foreign = _group(home, sid, "/somewhere/else/entirely", 12345, sleeper.pid)
    assert plugin.agent_tty_judge_group(group=foreign) is GroupVerdict.UNKNOWN
    assert plugin.agent_tty_group_alive(group=foreign) is True
    # Our shape, and our own folder for this Home lacks it: that leaf was removed.
    ours = _group(home, sid, f"/agent-tty-{os.geteuid()}/{_home_key(home)}/{sid}", 12345, sleeper.pid)
    assert plugin.agent_tty_judge_group(group=ours) is GroupVerdict.GONE
    assert plugin.agent_tty_group_alive(group=ours) is False
    # Without the root's id (a record written before it was kept) a missing path proves nothing.
    del ours.proof["cgroup"]["rootId"]
    assert plugin.agent_tty_judge_group(group=ours) is GroupVerdict.UNKNOWN
    assert plugin.agent_tty_group_alive(group=ours) is True
    assert sleeper.poll() is None


# ---------------------------------------------------------------- leaves on cgroupfs (root)


def _enter(leaf: Path, pid: int) -> None:
    (leaf / "cgroup.procs").write_text(str(pid))
    wait_until(lambda: any(line.endswith("/" + leaf.name) for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines()), what="the move")


def _remove_leaf(leaf: Path) -> None:
    def gone() -> bool:
        try:
            leaf.rmdir()
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True

    wait_until(gone, what=f"{leaf} removed")


@pytest.fixture
def leaves() -> Iterator[list[Path]]:
    """Cgroup folders a test made, innermost last; removed (emptied first by the test's kills)."""
    made: list[Path] = []
    yield made
    for leaf in reversed(made):
        _remove_leaf(leaf)


def _mkdirs(made: list[Path], *folders: Path) -> None:
    for folder in folders:
        if not folder.exists():
            folder.mkdir()
            made.append(folder)


def _sleeper_in(leaf: Path) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    _enter(leaf, process.pid)
    return process


@as_root
def test_a_leaf_under_another_users_folder_is_never_acted_on(tmp_path: Path, leaves: list[Path]) -> None:
    """Right key and session id, real cgroupfs, right id: but agent-tty-<other uid>."""
    mount = _mount()
    home, sid = tmp_path / "home", "planted0004"
    other = mount / "agent-tty-65534"
    leaf = other / _home_key(home) / sid
    _mkdirs(leaves, other, leaf.parent, leaf)
    victim = tmp_path / "victim"
    victim.write_text(VICTIM_TEXT)
    process = _sleeper_in(leaf)
    try:
        group = _group(home, sid, "/" + str(leaf.relative_to(mount)), leaf.stat().st_ino, process.pid)
        verdicts = _every_hook(group, home)
        _assert_untouched(verdicts, process, victim)
        assert (leaf / "cgroup.freeze").read_text().strip() == "0"
        assert leaf.is_dir()
    finally:
        process.kill()
        process.wait()


@as_root
def test_a_leaf_of_our_shape_that_another_uid_owns_is_never_acted_on(tmp_path: Path, leaves: list[Path]) -> None:
    """Everything matches but the owner: our leaves are made by us."""
    from agent_tty_plugins.linux_cgroup import leaf_for, probe

    mount = _mount()
    home, sid = tmp_path / "home", "planted0005"
    leaf = leaf_for(probe()[1], str(home), sid)
    _mkdirs(leaves, leaf.parent, leaf)
    os.chown(leaf, 65534, 65534)
    victim = tmp_path / "victim"
    victim.write_text(VICTIM_TEXT)
    process = _sleeper_in(leaf)
    try:
        group = _group(home, sid, "/" + str(leaf.relative_to(mount)), leaf.stat().st_ino, process.pid)
        _assert_untouched(_every_hook(group, home), process, victim)
        assert (leaf / "cgroup.freeze").read_text().strip() == "0"
        assert leaf.is_dir()
    finally:
        process.kill()
        process.wait()


BIND_SCRIPT = r"""
import json, signal, subprocess, sys
from pathlib import Path
args = json.loads(sys.argv[1])
subprocess.run(["mount", "--bind", args["source"], args["target"]], check=True)
from agent_tty.platform.types import GroupRef
from agent_tty_plugins import linux_cgroup as plugin
from agent_tty_plugins._posix import procfs
proof = {"bootId": procfs.boot_id(), "cgroup": {"path": args["path"], "id": args["id"]}}
group = GroupRef("linux_cgroup", args["pid"], proof, Path(args["folder"]), None, args["sid"])
verdicts = {
    "judge": plugin.agent_tty_judge_group(group=group),
    "kill": plugin.agent_tty_kill_group(group=group, signal=signal.SIGKILL),
    "term": plugin.agent_tty_kill_group(group=group, signal=signal.SIGTERM),
    "alive": plugin.agent_tty_group_alive(group=group),
    "release": plugin.agent_tty_release_group(group=group),
}
print(json.dumps({k: (v.value if hasattr(v, "value") else v) for k, v in verdicts.items()}))
"""


def _hooks_under_a_bind_mount(source: Path, target: Path, path: str, cgroup_id: int, pid: int, home: Path, sid: str) -> dict[str, Any]:
    """Every hook, from a private mount namespace in which `source` is mounted over `target`."""
    folder = home / "sessions" / sid
    folder.mkdir(parents=True, exist_ok=True)
    args = {"source": str(source), "target": str(target), "path": path, "id": cgroup_id, "pid": pid, "folder": str(folder), "sid": sid}
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", sys.executable, "-c", BIND_SCRIPT, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _assert_untouched_there(verdicts: dict[str, Any], process: subprocess.Popen[bytes], victim: Path) -> None:
    time.sleep(0.05)
    assert process.poll() is None, f"the planted record got an unrelated process killed: {verdicts}"
    assert _state(process.pid) not in ("T", "t"), "the planted record got an unrelated process stopped"
    assert victim.read_text() == VICTIM_TEXT, "a write through the planted cgroup.freeze symlink"
    assert "owned" not in (verdicts["judge"], verdicts["kill"], verdicts["term"]), verdicts


@as_root
def test_a_plain_folder_mounted_into_cgroupfs_is_never_acted_on(tmp_path: Path, leaves: list[Path], sleeper: subprocess.Popen[bytes]) -> None:
    """Our exact path, no "..", no symlink: but a bind mount puts a plain folder on it, whose
    inode is no cgroup id (st_dev tells)."""
    from agent_tty_plugins.linux_cgroup import leaf_for, probe

    mount = _mount()
    home, sid = tmp_path / "home", "planted0006"
    leaf = leaf_for(probe()[1], str(home), sid)
    _mkdirs(leaves, leaf.parent)
    victim = tmp_path / "victim"
    victim.write_text(VICTIM_TEXT)
    plain = tmp_path / "plain"
    fake = _fake_leaf(plain / sid, sleeper.pid, victim)
    verdicts = _hooks_under_a_bind_mount(plain, leaf.parent, "/" + str(leaf.relative_to(mount)), fake.stat().st_ino, sleeper.pid, home, sid)
    _assert_untouched_there(verdicts, sleeper, victim)
    assert fake.is_dir()


@as_root
def test_a_symlink_on_the_path_is_never_followed(tmp_path: Path, leaves: list[Path]) -> None:
    """Our exact path, but its last folder is a symlink to a real leaf of another program (on
    cgroupfs, with the id the record names): no symlink is ever followed."""
    from agent_tty_plugins.linux_cgroup import leaf_for, probe

    mount = _mount()
    home, sid = tmp_path / "home", "planted0007"
    leaf = leaf_for(probe()[1], str(home), sid)
    other = mount / f"agent-tty-test-target-{os.getpid()}"
    _mkdirs(leaves, leaf.parent, other)
    victim = tmp_path / "victim"
    victim.write_text(VICTIM_TEXT)
    process = _sleeper_in(other)
    try:
        links = tmp_path / "links"
        links.mkdir()
        (links / sid).symlink_to(other)
        verdicts = _hooks_under_a_bind_mount(links, leaf.parent, "/" + str(leaf.relative_to(mount)), other.stat().st_ino, process.pid, home, sid)
        _assert_untouched_there(verdicts, process, victim)
        assert (other / "cgroup.freeze").read_text().strip() == "0" and other.is_dir()
    finally:
        process.kill()
        process.wait()


# ---------------------------------------------------------------- our own leaves still work


cgroup = pytest.mark.skipif(default_mechanism() != "linux_cgroup", reason="this user cannot make cgroup leaves here")


@cgroup
def test_a_leaf_our_spawn_made_is_proven_frozen_killed_and_released(tmp_path: Path) -> None:
    from agent_tty.platform.types import GroupRef, GroupVerdict, SpawnRequest
    from agent_tty_plugins import linux_cgroup as plugin

    home, sid = tmp_path / "home", "ownleaf0001"
    folder = home / "sessions" / sid
    folder.mkdir(parents=True)
    request = SpawnRequest("linux_cgroup", ("sleep", "60"), dict(os.environ), None, 80, 24, session_id=sid, home=str(home))
    program = plugin.agent_tty_spawn(request=request)
    try:
        proof = plugin.agent_tty_capture_program(mechanism="linux_cgroup", pid=program.pid, host_pid=os.getpid()).proof
        identity = plugin.agent_tty_capture_host(mechanism="linux_cgroup", pid=os.getpid())
        group = GroupRef("linux_cgroup", program.pid, proof, folder, identity, sid)
        leaf = _mount() / proof["cgroup"]["path"].lstrip("/")
        assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.OWNED
        assert plugin.agent_tty_group_alive(group=group) is True
        assert plugin.agent_tty_release_group(group=group) is False, "a populated leaf stays"
        assert plugin.agent_tty_kill_group(group=group, signal=signal.SIGKILL) is GroupVerdict.OWNED
        wait_until(lambda: program.poll_exit() is not None, what="the program to end")
        wait_until(lambda: plugin.agent_tty_group_alive(group=group) is False, what="populated 0")
        assert plugin.agent_tty_release_group(group=group) is True
        assert not leaf.exists() and not leaf.parent.exists(), "the leaf and its Home's folder are freed"
        assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.GONE
    finally:
        if program.poll_exit() is None:
            os.kill(program.pid, signal.SIGKILL)  # our child, by pid
            wait_until(lambda: program.poll_exit() is not None, what="the program to end")
        program.close()


@cgroup
def test_sweep_frees_only_empty_leaves_of_gone_sessions(tmp_path: Path, leaves: list[Path]) -> None:
    from agent_tty_plugins import linux_cgroup as plugin
    from agent_tty_plugins.linux_cgroup import leaf_for, probe

    home = tmp_path / "home"
    placement = probe()[1]
    stray, busy, known = (leaf_for(placement, str(home), name) for name in ("stray0001", "busy00001", "known0001"))
    _mkdirs(leaves, stray.parent, stray, busy, known)
    process = _sleeper_in(busy)
    try:
        assert plugin.agent_tty_sweep(home=str(home), session_ids=["known0001"]) == ["stray0001"]
        assert not stray.exists() and busy.is_dir() and known.is_dir() and process.poll() is None
    finally:
        process.kill()
        process.wait()
    wait_until(lambda: "populated 0" in (busy / "cgroup.events").read_text(), what="the busy leaf to empty")
    assert sorted(plugin.agent_tty_sweep(home=str(home), session_ids=[])) == ["busy00001", "known0001"]
    assert not stray.parent.exists(), "the Home's folder goes with its last leaf"
