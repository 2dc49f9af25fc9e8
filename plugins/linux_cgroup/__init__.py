"""linux_cgroup: a cgroup v2 leaf per session, for atomic freeze and kill (Linux).

The program enters its own leaf before it runs any code of its own (the forked child writes
itself into the leaf's cgroup.procs before exec), and every process it starts is born there:
membership is inherited on fork and no process can leave without write access to another
cgroup. So the leaf's `cgroup.procs` lists the group without a /proc scan, `cgroup.kill` kills
every member in one write, `cgroup.freeze` stops them all at once, and `cgroup.events` says
`populated 0` once no live member is left (zombies do not count).

program.json's proof names the leaf by its path relative to the cgroup2 root and by its
cgroup id (the directory's inode), plus the boot id; a process proves the leaf is the session's
when that path resolves, in its own view of cgroupfs, to the same id on the same boot. The
proof also carries linux_autogroup's token, so a process that cannot see the leaf (another
cgroup namespace, no cgroupfs) judges the group as linux_autogroup would.
"""

from __future__ import annotations

import errno
import hashlib
import os
import signal as signals
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agent_tty.platform import hookimpl
from agent_tty.platform.types import (
    CapturedProgram,
    GroupRef,
    GroupVerdict,
    HostVerdict,
    ProbeResult,
    ProgramHandle,
    SpawnRequest,
)
from agent_tty_plugins import linux_autogroup as autogroup
from agent_tty_plugins._posix import groups, procfs

MECHANISM = "linux_cgroup"
RANK = 80
FREEZE_WAIT_S = 1.0
EVENTS_POLL_S = 0.002


def _ours(mechanism: str) -> bool:
    return mechanism == MECHANISM


# ---------------------------------------------------------------- where the leaves live


def cgroup2_mount() -> Path | None:
    """The cgroup2 mount point (unified or hybrid layout), from /proc/self/mountinfo."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        head, _, tail = line.partition(" - ")
        if tail.split(" ", 1)[0] == "cgroup2":
            fields = head.split()
            if fields[3] == "/":
                return Path(fields[4])
    return None


def own_cgroup(pid: int | str = "self") -> str | None:
    """This process's cgroup v2 path (relative to the cgroup2 root), from /proc/PID/cgroup."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("0::"):
            return line[3:]
    return None


def _home_key(home: str) -> str:
    return hashlib.sha256(home.encode()).hexdigest()[:12]


def _bases(mount: Path) -> list[Path]:
    """Where a leaf may go: the delegated subtree of our own cgroup (a systemd user session),
    then the root of the hierarchy (root)."""
    bases = []
    own = own_cgroup()
    if own and own != "/":
        bases.append(mount / own.lstrip("/"))
    bases.append(mount)
    return bases


@dataclass(frozen=True)
class Placement:
    mount: Path
    parent: Path
    """<base>/agent-tty-<uid>: this user's leaves, one folder per Home below it."""
    has_kill: bool


_probed: tuple[ProbeResult, Placement | None] | None = None


def _clear_stale_probes(parent: Path) -> None:
    """Probe leaves of processes that were killed mid-probe (their pid is in the name)."""
    try:
        names = [n for n in os.listdir(parent) if n.startswith("probe-")]
    except OSError:
        return
    for name in names:
        try:
            pid = int(name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if pid != os.getpid() and not Path(f"/proc/{pid}").exists():
            _rmdir_when_empty(parent / name)


def _try_base(mount: Path, base: Path) -> tuple[Placement | None, str]:
    parent = base / f"agent-tty-{os.getuid()}"
    try:
        parent.mkdir(mode=0o755, exist_ok=True)
        _clear_stale_probes(parent)
        leaf = parent / f"probe-{os.getpid()}-{time.monotonic_ns()}"
        leaf.mkdir()
    except OSError as err:
        return None, f"cannot create a cgroup under {base} ({err.strerror})"
    try:
        for name in ("cgroup.procs", "cgroup.freeze", "cgroup.events"):
            if not os.access(leaf / name, os.W_OK if name != "cgroup.events" else os.R_OK):
                return None, f"{leaf / name} is not usable by this user"
        # Really use it: a child moves itself in and ends (placement needs write access to
        # the common ancestor's cgroup.procs too, which only a real move shows).
        pid = os.fork()
        if pid == 0:
            try:
                (leaf / "cgroup.procs").write_text("0")
                os._exit(0)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return None, f"cannot move a process into a cgroup under {base}"
        return Placement(mount, parent, (leaf / "cgroup.kill").exists()), ""
    finally:
        _rmdir_when_empty(leaf)


def probe() -> tuple[ProbeResult, Placement | None]:
    """Create, use and remove a leaf; cached for the life of the process."""
    global _probed
    if _probed is None:
        _probed = _probe()
    return _probed


def _probe() -> tuple[ProbeResult, Placement | None]:
    import sys

    if not sys.platform.startswith("linux"):
        return ProbeResult(MECHANISM, False, RANK, "not Linux"), None
    mount = cgroup2_mount()
    if mount is None:
        return ProbeResult(MECHANISM, False, RANK, "no cgroup2 hierarchy is mounted"), None
    if procfs.boot_id() is None:
        return ProbeResult(MECHANISM, False, RANK, "the boot id is not readable"), None
    reasons = []
    for base in _bases(mount):
        placement, why = _try_base(mount, base)
        if placement is not None:
            detail = "" if placement.has_kill else " (no cgroup.kill: freeze and SIGKILL each member)"
            return ProbeResult(MECHANISM, True, RANK, f"cgroup v2 leaves under {placement.parent}{detail}", {"parent": str(placement.parent)}), placement
        reasons.append(why)
    return ProbeResult(MECHANISM, False, RANK, "; ".join(reasons)), None


def _rmdir_when_empty(leaf: Path) -> bool:
    try:
        leaf.rmdir()
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


# ---------------------------------------------------------------- choosing a platform


@hookimpl
def agent_tty_probe() -> ProbeResult:
    return probe()[0]


# ---------------------------------------------------------------- starting a program


def leaf_for(placement: Placement, home: str, session_id: str) -> Path:
    return placement.parent / _home_key(home) / session_id


@hookimpl
def agent_tty_spawn(request: SpawnRequest) -> ProgramHandle | None:
    if not _ours(request.mechanism):
        return None
    from agent_tty_plugins._posix.pty_spawn import spawn_in_pty

    result, placement = probe()
    if placement is None:
        raise OSError(errno.EPERM, f"linux_cgroup cannot work here: {result.reason}")
    leaf = leaf_for(placement, request.home, request.session_id)
    for _attempt in range(5):
        try:
            leaf.parent.mkdir(mode=0o755, exist_ok=True)
            leaf.mkdir(mode=0o755, exist_ok=True)
            break
        except FileNotFoundError:
            continue  # another process removed the Home's empty folder between the two mkdirs
    procs = str(leaf / "cgroup.procs")

    def enter_leaf() -> None:
        # In the child, after setsid, before exec: nothing of the program runs outside.
        with open(procs, "w") as handle:
            handle.write("0")

    try:
        return spawn_in_pty(request, before_exec=enter_leaf)
    except BaseException:
        # The child that failed to exec may still be ending inside the leaf: give it a moment.
        for _attempt in range(50):
            if _rmdir_when_empty(leaf):
                break
            time.sleep(0.002)
        raise


@hookimpl
def agent_tty_capture_program(mechanism: str, pid: int, host_pid: int) -> CapturedProgram | None:
    if not _ours(mechanism):
        return None
    token = autogroup.capture_token(pid, host_pid) or {}
    mount = cgroup2_mount()
    path = own_cgroup(pid)
    if mount is None or path is None or path == "/":
        return CapturedProgram(proof=token or None)
    try:
        cgroup_id = (mount / path.lstrip("/")).stat().st_ino
    except OSError:
        return CapturedProgram(proof=token or None)
    return CapturedProgram(proof={**token, "bootId": procfs.boot_id(), "cgroup": {"path": path, "id": cgroup_id}})


@hookimpl
def agent_tty_runs_inside(mechanism: str, program_pid: int) -> bool | None:
    if not _ours(mechanism):
        return None
    return autogroup.agent_tty_runs_inside(mechanism=autogroup.MECHANISM, program_pid=program_pid)


@hookimpl
def agent_tty_leave_program_group(mechanism: str) -> bool | None:
    """A process inside one of this user's leaves moves up to the leaf's parent, which holds
    no program: cgroup.kill of the leaf then spares it."""
    if not _ours(mechanism):
        return None
    mount, path = cgroup2_mount(), own_cgroup()
    if mount is None or path is None:
        return True
    here = mount / path.lstrip("/")
    if here.parent.parent.name != f"agent-tty-{os.getuid()}":
        return True  # not in a session leaf
    return _write(here.parent / "cgroup.procs", str(os.getpid()))


# ---------------------------------------------------------------- the program's group


def _leaf(group: GroupRef) -> Path | None:
    """The leaf, when this process sees the recorded one: same path, same cgroup id, same boot."""
    proof = group.proof or {}
    record = proof.get("cgroup")
    if not isinstance(record, dict) or proof.get("bootId") != procfs.boot_id():
        return None
    mount = cgroup2_mount()
    path, cgroup_id = record.get("path"), record.get("id")
    if mount is None or not isinstance(path, str) or not isinstance(cgroup_id, int):
        return None
    leaf = mount / path.lstrip("/")
    try:
        if leaf.stat().st_ino != cgroup_id:
            return None
    except OSError:
        return None
    return leaf


def _as_autogroup(group: GroupRef) -> GroupRef:
    return replace(group, mechanism=autogroup.MECHANISM)


def _gone_leaf(group: GroupRef) -> bool:
    """The recorded leaf no longer exists in our view, on the same boot: it was removed,
    which happens only once it was empty."""
    proof = group.proof or {}
    record = proof.get("cgroup")
    mount = cgroup2_mount()
    if not isinstance(record, dict) or mount is None or proof.get("bootId") != procfs.boot_id():
        return False
    own = own_cgroup()
    if own is None or not own.startswith("/") or not Path(mount, own.lstrip("/")).exists():
        return False  # our view of cgroupfs is not the host's: cannot tell
    return not (mount / str(record.get("path", "")).lstrip("/")).exists()


def _members(leaf: Path) -> list[int] | None:
    try:
        return [int(line) for line in (leaf / "cgroup.procs").read_text().split()]
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        return None


def _populated(leaf: Path) -> bool | None:
    try:
        for line in (leaf / "cgroup.events").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "populated":
                return value.strip() == "1"
    except FileNotFoundError:
        return False
    except OSError:
        return None
    return None


def _judge(group: GroupRef) -> tuple[GroupVerdict, Path | None]:
    leaf = _leaf(group)
    if leaf is None:
        if _gone_leaf(group):
            return GroupVerdict.GONE, None
        return autogroup.agent_tty_judge_group(group=_as_autogroup(group)), None
    members = _members(leaf)
    if members is None:
        return GroupVerdict.UNKNOWN, leaf
    return (GroupVerdict.OWNED if members else GroupVerdict.GONE), leaf


@hookimpl
def agent_tty_judge_group(group: GroupRef) -> GroupVerdict | None:
    if not _ours(group.mechanism):
        return None
    return _judge(group)[0]


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


def _wait_events(leaf: Path, key: str, value: str, limit: float) -> bool:
    deadline = time.monotonic() + limit
    while True:
        try:
            text = (leaf / "cgroup.events").read_text()
        except OSError:
            return False
        if f"{key} {value}" in text.splitlines():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(EVENTS_POLL_S)


def _kill_leaf(leaf: Path) -> None:
    """Every member at once; without cgroup.kill, freeze first so none can fork away."""
    if (leaf / "cgroup.kill").exists() and _write(leaf / "cgroup.kill", "1"):
        return
    _write(leaf / "cgroup.freeze", "1")
    _wait_events(leaf, "frozen", "1", FREEZE_WAIT_S)
    for pid in _members(leaf) or []:
        try:
            os.kill(pid, signals.SIGKILL)  # a member of the proven leaf: it cannot be another's
        except ProcessLookupError:
            pass
    _write(leaf / "cgroup.freeze", "0")


@hookimpl
def agent_tty_kill_group(group: GroupRef, signal: int) -> GroupVerdict | None:
    if not _ours(group.mechanism):
        return None
    verdict, leaf = _judge(group)
    if leaf is None:
        if verdict in (GroupVerdict.OWNED, GroupVerdict.UNKNOWN):
            return autogroup.agent_tty_kill_group(group=_as_autogroup(group), signal=signal)
        return verdict
    if verdict is not GroupVerdict.OWNED:
        return verdict
    if signal == signals.SIGKILL:
        _kill_leaf(leaf)
        return verdict
    # Other signals go to the program's process group, as a terminal's would, and only
    # while a member of the proven leaf still leads or belongs to that group.
    for pid in _members(leaf) or []:
        try:
            stat = procfs.read_stat(pid)
        except PermissionError:
            continue
        if stat is not None and stat.pgrp == group.pid:
            groups.signal_group(group.pid, signal)
            break
    return verdict


@hookimpl
def agent_tty_freeze_group(group: GroupRef) -> GroupVerdict | None:
    if not _ours(group.mechanism):
        return None
    verdict, leaf = _judge(group)
    if leaf is None:
        return autogroup.agent_tty_freeze_group(group=_as_autogroup(group))
    if verdict is GroupVerdict.OWNED:
        _write(leaf / "cgroup.freeze", "1")
        _wait_events(leaf, "frozen", "1", FREEZE_WAIT_S)
    return verdict


@hookimpl
def agent_tty_thaw_group(group: GroupRef) -> GroupVerdict | None:
    if not _ours(group.mechanism):
        return None
    verdict, leaf = _judge(group)
    if leaf is None:
        return autogroup.agent_tty_thaw_group(group=_as_autogroup(group))
    _write(leaf / "cgroup.freeze", "0")
    return verdict


@hookimpl
def agent_tty_group_alive(group: GroupRef) -> bool | None:
    if not _ours(group.mechanism):
        return None
    leaf = _leaf(group)
    if leaf is None:
        if _gone_leaf(group):
            return False
        return autogroup.agent_tty_group_alive(group=_as_autogroup(group))
    populated = _populated(leaf)
    return True if populated is None else populated  # unreadable: cannot tell, so alive


@hookimpl
def agent_tty_release_group(group: GroupRef) -> bool | None:
    if not _ours(group.mechanism):
        return None
    leaf = _leaf(group)
    if leaf is None:
        return True
    released = _populated(leaf) is False and _rmdir_when_empty(leaf)
    if released:
        _rmdir_when_empty(leaf.parent)  # the Home's folder, once its last leaf went (EBUSY otherwise)
    return released


@hookimpl
def agent_tty_sweep(home: str, session_ids: list[str]) -> list[str]:
    """Remove this Home's empty leaves whose session folder is gone (a host that crashed).
    A leaf whose folder still exists is left alone: its host may be about to use it."""
    result, placement = probe()
    if placement is None:
        return []
    folder = placement.parent / _home_key(home)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    known = set(session_ids)
    freed = []
    for name in names:
        leaf = folder / name
        if name in known or not leaf.is_dir():
            continue
        if _populated(leaf) is False and _rmdir_when_empty(leaf):
            freed.append(name)
    _rmdir_when_empty(folder)
    return freed


# ---------------------------------------------------------------- the host's identity: as autogroup


@hookimpl
def agent_tty_capture_host(mechanism: str, pid: int) -> dict[str, Any] | None:
    if not _ours(mechanism):
        return None
    return autogroup.agent_tty_capture_host(mechanism=autogroup.MECHANISM, pid=pid)


@hookimpl
def agent_tty_judge_host(mechanism: str, pid: int, identity: dict[str, Any] | None) -> HostVerdict | None:
    if not _ours(mechanism):
        return None
    return autogroup.agent_tty_judge_host(mechanism=autogroup.MECHANISM, pid=pid, identity=identity)


@hookimpl
def agent_tty_kill_host(mechanism: str, pid: int, identity: dict[str, Any]) -> HostVerdict | None:
    if not _ours(mechanism):
        return None
    return autogroup.agent_tty_kill_host(mechanism=autogroup.MECHANISM, pid=pid, identity=identity)
