"""agent-tty in a container, set up as a runtime would, without a runtime (root: unshare needs it).

The "container" is `unshare --cgroup --pid --mount --fork --mount-proc --propagation private`,
started from a cgroup this test creates below its own, so that the cgroup namespace's root is
that cgroup; inside, the host's cgroup mounts are dropped and cgroup2 is mounted at
/sys/fs/cgroup, as Docker and Podman do with `--cgroupns=private`. Its PID 1 reaps orphans (an
init such as `docker run --init`). Every CLI enters it as `docker exec` does: it moves itself
into the container's cgroup, then joins its namespaces with nsenter.

(a) cgroup2 mounted read-write (a writable, delegated subtree): doctor chooses linux_cgroup, the
    session's leaf is made below the container's cgroup, and destroy ends a fork chain and
    frees the leaf.
(b) cgroup2 mounted read-only (what Docker gives an unprivileged container): doctor chooses
    linux_autogroup and says why linux_cgroup was not chosen; destroy still ends the session's
    fork chain and nothing of it is left.

docs/containers.md cites this test as how the image's behaviour is checked here.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import Cli, agent_tty_command, beats, pid_alive, processes_of_home, wait_until
from tests.platforms.namespaces import in_cgroup, remove_cgroup_tree

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not sys.platform.startswith("linux")
        or os.geteuid() != 0
        or shutil.which("unshare") is None
        or shutil.which("nsenter") is None,
        reason="needs Linux, root, unshare and nsenter (to set up a container's namespaces)",
    ),
]

# PID 1 of the container: drop the host's cgroup mounts (a runtime gives the container a /sys of
# its own), mount cgroup2 as a runtime does, say it is ready, then reap every orphan.
INIT = r"""
set -eu
if mountpoint -q /sys/fs/cgroup; then umount -R /sys/fs/cgroup; fi
if [ -n "$HOST_CGROUP2" ] && mountpoint -q "$HOST_CGROUP2"; then umount -R "$HOST_CGROUP2"; fi
mount -t cgroup2 -o "$CGROUP_OPTIONS" cgroup /sys/fs/cgroup
: > "$READY"
exec "$PY" -c "$REAP"
"""
REAP = """
import os, time
while True:
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(0.05)
"""


@dataclass
class Container:
    cgroup: Path
    """The container's cgroup as this (outside) process sees it: the namespace's root."""
    unshare: subprocess.Popen[str]
    pid1: int
    """PID 1 of the container, by its pid here."""
    cli: Cli
    """agent-tty run inside the container, on the test's Home."""

    def procs(self) -> set[int]:
        """Every live process in the container's cgroup tree but unshare and PID 1."""
        found = set()
        for root, _dirs, _files in os.walk(self.cgroup):
            try:
                found.update(int(p) for p in Path(root, "cgroup.procs").read_text().split())
            except OSError:
                continue
        return {pid for pid in found if pid_alive(pid)} - {self.unshare.pid, self.pid1}


def _pid1_of(cgroup: Path) -> int | None:
    """The process in `cgroup` that is PID 1 of a pid namespace below ours."""
    for pid in (cgroup / "cgroup.procs").read_text().split():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        nspid = next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])
        if len(nspid) == 2 and nspid[1] == "1":
            return int(pid)
    return None


@pytest.fixture
def container(cli: Cli, tmp_path: Path) -> Iterator[Callable[[bool], Container]]:
    """start(read_only) sets up the container; at the end everything in it is killed (its PID 1,
    which takes the pid namespace with it) and its cgroup removed, before the cli fixture's
    own check that no process of the Home is left."""
    from agent_tty_plugins.linux_cgroup import cgroup2_mount, own_cgroup

    mount, own = cgroup2_mount(), own_cgroup()
    if mount is None or own is None:
        pytest.skip("no cgroup2 hierarchy is mounted here")
    base = mount / own.lstrip("/")
    top = base / f"agent-tty-test-container-{os.getpid()}-{tmp_path.name}"
    try:
        top.mkdir()
    except OSError as err:
        pytest.skip(f"cannot create a cgroup under {base} ({err.strerror})")
    started: list[Container] = []

    def start(read_only: bool) -> Container:
        assert not started, "one container per test"
        ready = tmp_path / "ready"
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_TTY_")}  # PID 1 is no process of the Home
        env.update(
            {
                "HOST_CGROUP2": str(mount),
                "CGROUP_OPTIONS": ("ro" if read_only else "rw") + ",nosuid,nodev,noexec",
                "READY": str(ready),
                "PY": sys.executable,
                "REAP": REAP,
            }
        )
        # --kill-child: PID 1 (and with it the namespace) dies with unshare.
        unshare = ["unshare", "--cgroup", "--pid", "--mount", "--fork", "--mount-proc", "--propagation", "private", "--kill-child"]
        process = subprocess.Popen(
            in_cgroup(top, [*unshare, "sh", "-c", INIT]),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(lambda: ready.exists() or process.poll() is not None, timeout=10, what="the container to start")
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        pid1 = wait_until(lambda: _pid1_of(top), timeout=5, what="the container's PID 1")
        inside = Cli(cli.home)
        # `docker exec`: join the container's cgroup (so /proc/self/cgroup reads 0::/ inside),
        # then its cgroup, mount and pid namespaces.
        nsenter = ["nsenter", "--target", str(pid1), "--cgroup", "--mount", "--pid", "--"]
        inside.command = in_cgroup(top, [*nsenter, *agent_tty_command()])
        inside.pin = None  # what the container chooses by itself
        box = Container(top, process, pid1, inside)
        started.append(box)
        return box

    try:
        yield start
    finally:
        for box in started:
            try:
                os.kill(box.pid1, signal.SIGKILL)  # ours: PID 1 of the container we started
            except ProcessLookupError:
                pass
            box.unshare.kill()
            box.unshare.communicate(timeout=10)
        remove_cgroup_tree(top)


def _fork_chain_session(box: Container, beat: Path) -> str:
    """A session whose shell starts a fork chain (a new process every few ms, each ending soon
    after it forked its successor), which ignores the shell's hang-up as a real leftover would."""
    chain = f"{sys.executable} {FIXTURES / 'fork_chain.py'} {beat} 30"
    sid = box.cli.create("sh", "-c", f"trap '' HUP; {chain} & exec sleep 300")["sessionId"]
    wait_until(beat.exists, what="the chain to start")
    assert beats(beat, 2.0), "the chain runs"
    return sid


def _destroyed_with_nothing_left(cli: Cli, box: Container, sid: str, beat: Path) -> None:
    done = box.cli.run("destroy", sid)
    assert done.code == 0 and done.result["status"] == "destroyed", done.stdout
    assert not beats(beat, 0.5), "the chain survived destroy"
    wait_until(lambda: not processes_of_home(cli.home), timeout=5, what="every process of the Home to end")
    wait_until(lambda: not box.procs(), timeout=5, what="the container's cgroup to hold PID 1 alone")


def _doctor(box: Container, title: str) -> dict:
    human = box.cli.run("doctor", json_out=False)
    print(f"--- agent-tty doctor ({title})\n{human.stdout}{human.stderr}", end="")
    assert human.code == 0, human.stdout + human.stderr
    report = box.cli.run("doctor")
    assert report.code == 0, report.stdout
    return {"human": human.stdout, **report.result}


def test_writable_delegated_subtree_chooses_linux_cgroup(cli: Cli, container: Callable[[bool], Container], tmp_path: Path) -> None:
    from agent_tty_plugins.linux_cgroup import _home_key

    box = container(False)
    report = _doctor(box, "cgroup2 mounted read-write")
    assert report["mechanism"] == "linux_cgroup", report["human"]
    entry = next(p for p in report["plugins"] if p["name"] == "linux_cgroup")
    assert entry["usable"] and entry["reason"] == "cgroup v2 leaves under /sys/fs/cgroup/agent-tty-0", entry
    assert "mechanism  linux_cgroup\n" in report["human"]

    beat = tmp_path / "beat"
    sid = _fork_chain_session(box, beat)
    program = cli.program(sid)
    assert program["mechanism"] == "linux_cgroup"
    # The leaf's path is relative to the namespace's root, which is the container's cgroup.
    record = program["proof"]["cgroup"]
    assert record["path"] == f"/agent-tty-0/{_home_key(str(cli.home))}/{sid}", record
    assert record["rootId"] == box.cgroup.stat().st_ino
    leaf = box.cgroup / record["path"].lstrip("/")
    assert "populated 1" in (leaf / "cgroup.events").read_text().splitlines()

    _destroyed_with_nothing_left(cli, box, sid, beat)
    assert not leaf.exists(), "destroy freed the session's leaf"
    assert not leaf.parent.exists(), "and the Home's folder with its last leaf"


def test_read_only_cgroup_mount_falls_back_to_linux_autogroup(cli: Cli, container: Callable[[bool], Container], tmp_path: Path) -> None:
    box = container(True)
    report = _doctor(box, "cgroup2 mounted read-only")
    assert report["mechanism"] == "linux_autogroup", report["human"]
    entry = next(p for p in report["plugins"] if p["name"] == "linux_cgroup")
    why = "cannot create a cgroup under /sys/fs/cgroup (Read-only file system)"
    assert entry["usable"] is False and entry["reason"] == why and entry["notChosenBecause"] == why, entry
    assert "mechanism  linux_autogroup\n" in report["human"]
    assert f"-- linux_cgroup (rank 80): {why}\n" in report["human"]

    beat = tmp_path / "beat"
    sid = _fork_chain_session(box, beat)
    assert cli.program(sid)["mechanism"] == "linux_autogroup"
    _destroyed_with_nothing_left(cli, box, sid, beat)
    assert [p.name for p in box.cgroup.iterdir() if p.is_dir()] == [], "nothing was made in the read-only cgroup"
