"""linux_cgroup: a cgroup v2 leaf per session, for atomic freeze and kill (Linux).

The program is in its own leaf before it runs any code of its own (ProgramStartsInLeaf): it is
born there (clone3 with CLONE_INTO_CGROUP, clone_into.py) where the kernel allows, else the
forked child writes itself into the leaf's cgroup.procs before exec; and every process it starts
is born there: membership is inherited on fork and no process can leave without write access to
another cgroup. So the leaf's `cgroup.procs` lists the group without a /proc scan, `cgroup.kill` kills
every member in one write, `cgroup.freeze` stops them all at once, and `cgroup.events` says
`populated 0` once no live member is left (zombies do not count).

program.json's proof names the leaf by its path relative to the cgroup2 root and by its
cgroup id (the directory's inode), plus the boot id and the cgroup id of the root that path is
relative to (the root of the capturing host's cgroup namespace); a process proves the leaf is
the session's when that path resolves, in its own view of cgroupfs, to the same id on the same
boot. A missing path proves the leaf gone only from the same root: a process in another cgroup
namespace resolves the path elsewhere. The proof also carries linux_autogroup's token, so a
process that cannot see the leaf (another cgroup namespace, no cgroupfs) judges the group as
linux_autogroup would.

The Home is a trust boundary: a record is data, not authority. A recorded path must end in
agent-tty-<euid>/<home key>/<session id> and is opened folder by folder without following a
symlink, on cgroupfs only, owned by us; every later read, write and rmdir goes through the
fds so opened.
"""

from __future__ import annotations

import errno
import os
import signal as signals
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

from agent_tty.frozen import Frozen
from agent_tty.platform import hookimpl
from agent_tty.platform.types import (
    CapturedProgram,
    GroupRef,
    GroupVerdict,
    HostVerdict,
    ProbeResult,
    SpawnRequest,
)
from agent_tty_plugins import linux_autogroup as autogroup
from agent_tty_plugins._posix import groups, procfs
from agent_tty_plugins.linux_cgroup import clone_into

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command that judges a host ~2 ms
    from typing import Any, Self

    from agent_tty.platform.handle import ProgramHandle

MECHANISM = "linux_cgroup"
CLONE3_ENV = "AGENT_TTY_CGROUP_CLONE3"
"""`0` in the environment of a host (create's, the CLI's for a probe): no clone3, every child
moves itself into its leaf as before Linux 5.7 (tests force that path with it; an operator whose
seccomp filter kills on clone3 instead of refusing it needs it)."""
RANK = 80
FREEZE_WAIT_S = 1.0
EVENTS_POLL_S = 0.002


def _ours(mechanism: str) -> bool:
    return mechanism == MECHANISM


# ---------------------------------------------------------------- where the leaves live


def _cgroup2_root() -> tuple[Path, int] | None:
    """The cgroup2 mount point (unified or hybrid layout) and its device, which every file of
    cgroupfs has as st_dev, from /proc/self/mountinfo."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        head, _, tail = line.partition(" - ")
        if tail.split(" ", 1)[0] == "cgroup2":
            fields = head.split()
            if fields[3] == "/":
                major, _, minor = fields[2].partition(":")
                return Path(fields[4]), os.makedev(int(major), int(minor))
    return None


def cgroup2_mount() -> Path | None:
    found = _cgroup2_root()
    return found[0] if found is not None else None


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
    import hashlib  # here: its OpenSSL load is ~1 ms that list and inspect, which never ask, paid (issue 26)

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


class Placement(Frozen):
    __slots__ = ("mount", "parent", "has_kill", "born")
    DEFAULTS = {"born": "moved in"}
    mount: Path
    parent: Path
    """<base>/agent-tty-<uid>: this user's leaves, one folder per Home below it."""
    has_kill: bool
    born: str
    """How the probe's child got into its leaf: "clone3", or "moved in (why not clone3)"."""


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
    # The effective uid: it owns what mkdir makes, and the checks of a recorded leaf ask for it.
    parent = base / f"agent-tty-{os.geteuid()}"
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
        # Really use it: a child is born in it (clone3), or moves itself in, and ends
        # (placement needs write access to the common ancestor's cgroup.procs too, which only a
        # real start or move shows; clone3 checks what that write would).
        birth = Birth(leaf, mount)
        try:
            pid = birth.fork()
            if pid == 0:
                try:
                    birth.enter()
                    os._exit(0)
                except BaseException:  # noqa: BLE001 - a forked child reports any failure by its exit status
                    os._exit(1)
        finally:
            birth.close()
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return None, f"cannot move a process into a cgroup under {base}"
        return Placement(mount, parent, (leaf / "cgroup.kill").exists(), birth.way()), ""
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
            return ProbeResult(MECHANISM, True, RANK, f"cgroup v2 leaves under {placement.parent}{detail}", {"parent": str(placement.parent), "start": placement.born}), placement
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
    birth = Birth(leaf, placement.mount)
    try:
        return spawn_in_pty(request, before_exec=birth.enter, held=True, fork=birth.fork)
    except BaseException:
        # The child that failed to exec may still be ending inside the leaf: give it a moment.
        for _attempt in range(50):
            if _rmdir_when_empty(leaf):
                break
            time.sleep(0.002)
        raise
    finally:
        birth.close()


class Birth:
    """How a child gets into its leaf before it runs any code of its own (ProgramStartsInLeaf):
    born there (clone3 with CLONE_INTO_CGROUP: no migration, ADR 0045) where the kernel and this
    process allow it, else forked beside us and moved in by itself before its exec. Use
    `fork` for os.fork and `enter` in the child before the exec; close it in the parent."""

    def __init__(self, leaf: Path, mount: Path) -> None:
        self.procs = str(leaf / "cgroup.procs")
        self.path = "/" + str(leaf.relative_to(mount))
        """The leaf as /proc/self/cgroup names it (relative to the root of our cgroup namespace,
        which _cgroup2_root's mount is)."""
        self.born = False
        self.why: str | None = None
        self.fd: int | None = None
        if os.environ.get(CLONE3_ENV) == "0":
            self.why = f"{CLONE3_ENV}=0"
            return
        try:
            self.fd = os.open(leaf, DIR_FLAGS)
        except OSError as err:
            self.why = f"cannot open {leaf} ({err.strerror})"

    def fork(self) -> int:
        """os.fork: the child's pid here, 0 in the child; an OSError when no child started."""
        if self.fd is not None:
            try:
                pid = clone_into.fork_into(self.fd)
            except clone_into.Unavailable as err:
                self.why = str(err)
            else:
                self.born = True
                return pid
        return os.fork()

    def enter(self) -> None:
        """In the child (after setsid, before the exec or the hold): a child born in its leaf
        checks that it is there, any other moves itself in; an error stops the child before
        its exec (the spawn fails), so no path execs outside the leaf."""
        if self.born and own_cgroup() == self.path:
            return
        with open(self.procs, "w") as handle:
            handle.write("0")

    def way(self) -> str:
        return "clone3" if self.born else f"moved in ({self.why})"

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


@hookimpl
def agent_tty_capture_program(mechanism: str, pid: int, host_pid: int) -> CapturedProgram | None:
    if not _ours(mechanism):
        return None
    token = autogroup.capture_token(pid, host_pid) or {}
    # /proc/PID/cgroup gives the path relative to the root of our cgroup namespace, which is
    # the root of the mount _open_root picks (mountinfo root "/"): its id names that root.
    path = own_cgroup(pid)
    if path is None or path == "/":
        return CapturedProgram(proof=token or None)
    try:
        with _open_root() as root:
            root_id = os.fstat(root.fd).st_ino
            cgroup_id = os.stat(path.lstrip("/"), dir_fd=root.fd).st_ino
    except (OSError, NotOurs):
        return CapturedProgram(proof=token or None)
    record = {"path": path, "id": cgroup_id, "rootId": root_id}
    return CapturedProgram(proof={**token, "bootId": procfs.boot_id(), "cgroup": record})


@hookimpl
def agent_tty_runs_inside(mechanism: str, program_pid: int, host_identity: dict[str, Any] | None) -> bool | None:
    if not _ours(mechanism):
        return None
    return autogroup.agent_tty_runs_inside(
        mechanism=autogroup.MECHANISM, program_pid=program_pid, host_identity=host_identity
    )


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
    if here.parent.parent.name != f"agent-tty-{os.geteuid()}":
        return True  # not in a session leaf
    return _write(here.parent / "cgroup.procs", str(os.getpid()))


# ---------------------------------------------------------------- opening a recorded leaf

# program.json is data anyone who can write the session folder may have planted: its path and id
# are checked and then opened folder by folder, and every later read, write and rmdir goes
# through the fds so opened, never through the recorded path again.

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""A folder, never through a symlink (O_NOFOLLOW fails with ELOOP on one)."""
OWN_DEPTH = 3
"""agent-tty-<euid>/<home key>/<session id>: the folders of a leaf's path that we made."""


class NotOurs(Exception):
    """A folder on the way is not a folder of cgroupfs, or not this user's where it must be."""


class LeafFile(Frozen):
    """An interface file of an opened folder (cgroup.procs, ...), opened relative to its fd."""

    __slots__ = ("dir_fd", "name")

    dir_fd: int
    name: str

    def _open(self, flags: int) -> int:
        return os.open(self.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.dir_fd)

    def exists(self) -> bool:
        try:
            os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except OSError:
            return False
        return True

    def read_text(self) -> str:
        with open(self._open(os.O_RDONLY), "rb") as handle:
            return handle.read().decode("ascii", "replace")

    def write_text(self, value: str) -> None:
        fd = self._open(os.O_WRONLY)
        try:
            os.write(fd, value.encode())
        finally:
            os.close(fd)


class OpenedPath:
    """Folders of cgroupfs opened one below the other from the cgroup2 root, each checked as it
    is opened; `path / name` is a file of the last one. Close it (it is a context manager)."""

    def __init__(self, root_fd: int, dev: int) -> None:
        self.fds = [root_fd]
        self.names = [""]
        self.dev = dev

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __truediv__(self, name: str) -> LeafFile:
        return LeafFile(self.fds[-1], name)

    @property
    def fd(self) -> int:
        return self.fds[-1]

    def descend(self, parts: list[str], owned: int) -> None:
        """Enter every folder of `parts` in turn, the last `owned` of them ours (see enter)."""
        for index, name in enumerate(parts):
            self.enter(name, owned=index >= len(parts) - owned)

    def enter(self, name: str, owned: bool) -> None:
        """Open the folder `name` of the last one. Raises OSError (FileNotFoundError: no such
        folder) or NotOurs: another file system (a bind mount: its inodes are not cgroup ids),
        or a folder we must have made that another uid owns."""
        fd = os.open(name, DIR_FLAGS, dir_fd=self.fds[-1])
        info = os.fstat(fd)
        if info.st_dev != self.dev or (owned and info.st_uid != os.geteuid()):
            os.close(fd)
            raise NotOurs(name)
        self.fds.append(fd)
        self.names.append(name)

    def leave(self) -> None:
        os.close(self.fds.pop())
        self.names.pop()

    def rmdir_last(self) -> bool:
        """Remove the last folder by its name in the folder above, which stays the one we
        checked; True once it is gone. cgroupfs refuses a folder that has members or children."""
        name = self.names[-1]
        self.leave()
        try:
            os.rmdir(name, dir_fd=self.fds[-1])
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True

    def close(self) -> None:
        while self.fds:
            os.close(self.fds.pop())
        self.names.clear()


def _open_root() -> OpenedPath:
    """The cgroup2 root, checked against mountinfo's device: a folder mounted over it is refused."""
    found = _cgroup2_root()
    if found is None:
        raise NotOurs("no cgroup2 mount")
    mount, dev = found
    try:
        fd = os.open(mount, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as err:
        raise NotOurs(str(mount)) from err
    if os.fstat(fd).st_dev != dev:
        os.close(fd)
        raise NotOurs(str(mount))
    return OpenedPath(fd, dev)


def _open_path(parts: list[str], owned: int) -> OpenedPath:
    """Every folder of `parts` below the cgroup2 root, the last `owned` of them ours. Raises
    OSError (FileNotFoundError: a folder is missing) or NotOurs."""
    opened = _open_root()
    try:
        opened.descend(parts, owned)
    except BaseException:
        opened.close()
        raise
    return opened


def _leaf_parts(group: GroupRef) -> list[str] | None:
    """The recorded path's folders, when it has the shape of a leaf this user made for this
    session of this Home: "/" + folders, none empty, "." or "..", the last three
    agent-tty-<euid>/<home key>/<session id>. Anything else is refused before it is opened."""
    record = (group.proof or {}).get("cgroup")
    path = record.get("path") if isinstance(record, dict) else None
    if not isinstance(path, str) or not path.startswith("/") or "\0" in path:
        return None
    parts = path[1:].split("/")
    if any(part in ("", ".", "..") for part in parts):
        return None
    # GroupRef.folder is <home>/sessions/<session id>; the host's spawn passed str(<home>).
    own = [f"agent-tty-{os.geteuid()}", _home_key(str(group.folder.parent.parent)), group.session_id]
    return parts if parts[-OWN_DEPTH:] == own else None


def _open_leaf(group: GroupRef) -> OpenedPath | None:
    """The recorded leaf, opened, when it is on cgroupfs, ours, and the directory the record
    names: same cgroup id (the inode, on cgroupfs), same boot."""
    proof = group.proof or {}
    parts = _leaf_parts(group)
    cgroup_id = proof["cgroup"].get("id") if parts is not None else None
    if parts is None or type(cgroup_id) is not int or proof.get("bootId") != procfs.boot_id():
        return None
    try:
        leaf = _open_path(parts, owned=OWN_DEPTH)
    except (OSError, NotOurs):
        return None
    if os.fstat(leaf.fd).st_ino != cgroup_id:
        leaf.close()
        return None
    return leaf


def _leaf(group: GroupRef) -> AbstractContextManager[OpenedPath | None]:
    """`with _leaf(group) as leaf:` the proven leaf, or None; closed at the end of the block."""
    leaf = _open_leaf(group)
    return leaf if leaf is not None else nullcontext()


# ---------------------------------------------------------------- the program's group


def _as_autogroup(group: GroupRef) -> GroupRef:
    return group.replace(mechanism=autogroup.MECHANISM)


def _gone_leaf(group: GroupRef) -> bool:
    """The recorded leaf no longer exists, on the same boot: it was removed, which happens only
    once it was empty. Only a path of a leaf's shape reads gone, only from the root the host
    recorded the path against (MissingLeafNeedsSameRoot: in another cgroup namespace the same
    path names another folder, or none, while the leaf runs), and only when a folder of it
    that we opened and checked lacks the next one (cgroup v2 folders are never renamed, so the
    leaf is nowhere else); anything else cannot tell. A record without the root's id (written
    before it was recorded) never reads gone through a missing path."""
    proof = group.proof or {}
    parts = _leaf_parts(group)
    mount = cgroup2_mount()
    if parts is None or mount is None or proof.get("bootId") != procfs.boot_id():
        return False
    own = own_cgroup()
    if own is None or not own.startswith("/") or not Path(mount, own.lstrip("/")).exists():
        return False  # our view of cgroupfs is not the host's: cannot tell
    root_id = proof["cgroup"].get("rootId")
    try:
        root = _open_root()
    except NotOurs:
        return False
    with root:
        if type(root_id) is not int or os.fstat(root.fd).st_ino != root_id:
            return False  # MissingLeafNeedsSameRoot: another root resolves the path elsewhere
        try:
            root.descend(parts, OWN_DEPTH)
        except FileNotFoundError:
            return True
        except (OSError, NotOurs):
            return False
    return False


def _members(leaf: OpenedPath) -> list[int] | None:
    try:
        return [int(line) for line in (leaf / "cgroup.procs").read_text().split()]
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        return None


def _populated(leaf: OpenedPath) -> bool | None:
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


def _verdict(group: GroupRef, leaf: OpenedPath | None) -> GroupVerdict:
    if leaf is None:
        if _gone_leaf(group):
            return GroupVerdict.GONE
        return autogroup.agent_tty_judge_group(group=_as_autogroup(group))
    members = _members(leaf)
    if members is None:
        return GroupVerdict.UNKNOWN
    return GroupVerdict.OWNED if members else GroupVerdict.GONE


@contextmanager
def _judge(group: GroupRef) -> Iterator[tuple[GroupVerdict, OpenedPath | None]]:
    """`with _judge(group) as (verdict, leaf):` the verdict and the proven leaf to act on, which
    stays open for the block; leaf None: judged as linux_autogroup would, or gone."""
    with _leaf(group) as leaf:
        yield _verdict(group, leaf), leaf


@hookimpl
def agent_tty_judge_group(group: GroupRef) -> GroupVerdict | None:
    if not _ours(group.mechanism):
        return None
    with _judge(group) as (verdict, _leaf_held):
        return verdict


def _write(path: Path | LeafFile, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


def _wait_events(leaf: OpenedPath, key: str, value: str, limit: float) -> bool:
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


def _kill_leaf(leaf: OpenedPath) -> None:
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
    with _judge(group) as (verdict, leaf):
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
def agent_tty_group_alive(group: GroupRef) -> bool | None:
    if not _ours(group.mechanism):
        return None
    with _leaf(group) as leaf:
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
    with _leaf(group) as leaf:
        if leaf is None:
            # Nothing to free in our view; released only when the leaf is proven gone (from
            # another cgroup namespace it may still hold the program).
            return _gone_leaf(group)
        released = _populated(leaf) is False and leaf.rmdir_last()
        if released:
            leaf.rmdir_last()  # the Home's folder, once its last leaf went (EBUSY otherwise)
        return released


def _free_stray(folder: OpenedPath, name: str) -> bool:
    """Remove the empty leaf `name` of our Home's folder, opened and checked as a recorded
    leaf is (a folder of cgroupfs that we own), and removed by name relative to the folder."""
    try:
        folder.enter(name, owned=True)
    except (OSError, NotOurs):
        return False  # a file (cgroup.procs, ...), or nothing we made
    if _populated(folder) is False:
        return folder.rmdir_last()
    folder.leave()
    return False


@hookimpl
def agent_tty_sweep(home: str, session_ids: list[str]) -> list[str]:
    """Remove this Home's empty leaves whose session folder is gone (a host that crashed).
    A leaf whose folder still exists is left alone: its host may be about to use it."""
    _result, placement = probe()
    if placement is None:
        return []
    parts = [*placement.parent.relative_to(placement.mount).parts, _home_key(home)]
    try:
        folder = _open_path(parts, owned=2)  # agent-tty-<euid>/<home key>: ours
    except (OSError, NotOurs):
        return []
    with folder:
        known = set(session_ids)
        freed = [name for name in os.listdir(folder.fd) if name not in known and _free_stray(folder, name)]
        folder.rmdir_last()  # the Home's folder, once its last leaf went (EBUSY otherwise)
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
