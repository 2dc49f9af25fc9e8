"""The Home is a trust boundary: nothing another user can write is obeyed.

Every test here is an attack by one user on another through a Home: agent-tty-test2 (the
attacker) plants records, folders, links, FIFOs and sockets; agent-tty-test (the victim) or root
runs an ordinary command; the test asserts the safe outcome first (the victim's file intact, its
process alive, no folder removed, the secret never on the attacker's socket, create working
despite a squatter), then the error the contract gives.

Runs as root only, in the last stage of scripts/test, which creates both users and names the
interpreter they (and root, here) run agent-tty with in AGENT_TTY_TEST_USERS_PYTHON. Every
Home lives in a fresh folder under /tmp; what the attacker makes, he makes himself (a forked
child with his uid, gid and no other groups).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, pid_alive, wait_until

USERS_PYTHON = os.environ.get("AGENT_TTY_TEST_USERS_PYTHON", "")
SECRET = "my-secret-password"
DEAD_HOST_PID = 4_000_000
"""A host pid whose host.json names another boot: every reader judges that host dead."""
OTHER_BOOT = {"bootId": "00000000-0000-0000-0000-000000000000", "startTime": 1}


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    gid: int
    dir: str


def _user(name: str) -> User | None:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    return User(name, entry.pw_uid, entry.pw_gid, entry.pw_dir)


ROOT = User("root", 0, 0, "/root")
VICTIM = _user("agent-tty-test")
ATTACKER = _user("agent-tty-test2")


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "runs as root: it switches between agent-tty-test, agent-tty-test2 and root (scripts/test, last stage)"
    if not USERS_PYTHON or not os.access(USERS_PYTHON, os.X_OK):
        return "AGENT_TTY_TEST_USERS_PYTHON must name an interpreter with agent-tty that both test users can run"
    if VICTIM is None or ATTACKER is None:
        return "needs the users agent-tty-test and agent-tty-test2 (scripts/test creates them)"
    return None


SKIP = _skip_reason()
pytestmark = [pytest.mark.integration, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]


def _cli_command() -> list[str]:
    script = Path(USERS_PYTHON).with_name("agent-tty")
    return [str(script)] if script.exists() else [USERS_PYTHON, "-m", "agent_tty"]


# ---------------------------------------------------------------- acting as a user


def _become(user: User) -> None:
    os.setgroups([])
    os.setresgid(user.gid, user.gid, user.gid)
    os.setresuid(user.uid, user.uid, user.uid)
    os.umask(0o022)


def _fork_as(user: User, action: Callable[[], object]) -> int:
    """A child of ours that does `action` with the user's rights only, then ends."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            _become(user)
            action()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    return pid


def as_user(user: User, action: Callable[[], object]) -> None:
    """Do `action` as `user` (what that user could do), and wait for it."""
    _, status = os.waitpid(_fork_as(user, action), 0)
    assert os.waitstatus_to_exitcode(status) == 0, f"as {user.name}: {action} failed (see the captured stderr)"


def _env(user: User, home: Path) -> dict[str, str]:
    # No XDG_RUNTIME_DIR: the socket folder is chosen as for a user without a login session.
    # AGENT_TTY_HOME (the same as --home) marks every host and program for the clean-up.
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": user.dir, "AGENT_TTY_HOME": str(home)}


def _as(user: User) -> dict[str, Any]:
    if user.uid == 0:
        return {}
    return {"user": user.uid, "group": user.gid, "extra_groups": [], "umask": 0o022}


# ---------------------------------------------------------------- records an attacker plants


def boot_id() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def manifest(
    session_id: str, socket_path: str, status: str = "running", host_pid: int | None = DEAD_HOST_PID
) -> dict[str, Any]:
    """session.json; running with DEAD_HOST_PID, every reader reconciles it (host.json: dead_host)."""
    now = time.time()
    return {
        "version": 1,
        "sessionId": session_id,
        "status": status,
        "argv": ["sleep", "300"],
        "cols": 80,
        "rows": 24,
        "createdAt": now,
        "updatedAt": now,
        "socketPath": socket_path,
        "mechanism": "linux_cgroup",
        "hostPid": host_pid,
        "childPid": None,
        "endedAt": None if status == "running" else now,
    }


def dead_host() -> dict[str, Any]:
    return {"version": 1, "mechanism": "linux_cgroup", "pid": DEAD_HOST_PID, "identity": OTHER_BOOT}


def cgroup_proof(leaf: Path) -> dict[str, Any]:
    """program.json naming a plain folder as the program's cgroup leaf, through `..` out of the
    cgroup2 mount, with the folder's inode as the cgroup id."""
    return {
        "version": 1,
        "mechanism": "linux_cgroup",
        "pid": DEAD_HOST_PID + 1,
        "proof": {
            "bootId": boot_id(),
            "cgroup": {"path": "/" + "../" * 16 + str(leaf).lstrip("/"), "id": leaf.stat().st_ino},
        },
    }


def write_json(path: Path, value: dict[str, Any], mode: int = 0o644) -> None:
    path.write_text(json.dumps(value))
    os.chmod(path, mode)


def plant(
    folder: Path,
    session: dict[str, Any],
    host: dict[str, Any] | None = None,
    program: dict[str, Any] | None = None,
    mode: int = 0o755,
) -> None:
    """A session folder with the given records (run as the user who plants it)."""
    folder.mkdir()
    os.chmod(folder, mode)
    write_json(folder / "session.json", session)
    if host is not None:
        write_json(folder / "host.json", host)
    if program is not None:
        write_json(folder / "program.json", program)


def fake_leaf(folder: Path, members: list[int], freeze_link: Path | None = None) -> None:
    """A plain folder that reads as a cgroup leaf: cgroup.procs lists `members`, and
    cgroup.freeze may be a link to someone else's file (run as the attacker)."""
    folder.mkdir(mode=0o755)
    (folder / "cgroup.procs").write_text("".join(f"{pid}\n" for pid in members))
    if freeze_link is not None:
        os.symlink(freeze_link, folder / "cgroup.freeze")


def chown_tree(path: Path, user: User) -> None:
    os.lchown(path, user.uid, user.gid)
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), user.uid, user.gid)


# ---------------------------------------------------------------- what must stay as it was

PRECIOUS = b"precious\n"


def precious(path: Path, owner: User) -> Path:
    """A file of `owner` that an obeyed record would unlink, overwrite or create beside."""
    path.write_bytes(PRECIOUS)
    os.chown(path, owner.uid, owner.gid)
    os.chmod(path, 0o644)
    return path


def assert_intact(*paths: Path) -> None:
    for path in paths:
        assert path.exists(), f"{path} was removed"
        assert path.read_bytes() == PRECIOUS, f"{path} was overwritten: {path.read_bytes()!r}"


def tree(*roots: Path) -> dict[str, tuple[int, int, int, int, int]]:
    """Every path under the roots (links not followed) with what a write would change."""
    found = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for path in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                info = os.lstat(path)
                found[path] = (info.st_ino, info.st_mode, info.st_uid, info.st_size, info.st_mtime_ns)
    return found


def assert_unsafe_home(done: Result, path: Path, problems: set[str], owner: User | None = None) -> None:
    """Exit 8 with UNSAFE_HOME, naming the folder at fault, its owner, mode and the problem."""
    assert done.code == 8, (done.code, done.stdout, done.stderr)
    error = done.error
    assert error["code"] == "UNSAFE_HOME", error
    details = error["details"]
    assert details["problem"] in problems, details
    assert details["path"] == str(path), details
    info = os.lstat(path)
    assert details["owner"] == (owner.uid if owner is not None else info.st_uid), details
    assert details["mode"] == f"{stat.S_IMODE(info.st_mode):04o}", details


# ---------------------------------------------------------------- the lab: folders, CLIs, processes


@dataclass
class Capture:
    """The attacker's listening socket: what it received, and its pid."""

    path: Path
    log: Path
    pid: int

    def received(self) -> bytes:
        return self.log.read_bytes() if self.log.exists() else b""


def _serve(path: Path, log: Path) -> None:
    """Accept every connection, keep what it sends, answer like a host that typed it."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    os.chmod(path, 0o777)
    server.listen(8)
    log.touch()
    while True:
        conn, _ = server.accept()
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                with open(log, "ab") as handle:
                    handle.write(data)
                conn.sendall(b'{"ok":true,"result":{"seq":1}}\n')
            except OSError:
                pass


class Lab:
    """A fresh folder under /tmp for one test, the CLI as any user, and every process the test
    starts, ended by pid at teardown."""

    def __init__(self) -> None:
        # Like /tmp: root's, writable by all, sticky. Each user makes his own folders in it. The
        # name is short, so that a Home right below it has room for run/<id>.sock in sun_path.
        self.base = Path(tempfile.mkdtemp(prefix="att-", dir="/tmp"))
        os.chmod(self.base, 0o1777)
        self.children: list[int] = []
        self.sleepers: list[subprocess.Popen[bytes]] = []
        self.sockets: list[Path] = []

    def folder(self, user: User, name: str, mode: int = 0o755) -> Path:
        """base/name, made by `user` (a user's own folder, or the attacker's shared one)."""
        path = self.base / name

        def make() -> None:
            path.mkdir(parents=True)
            os.chmod(path, mode)

        as_user(user, make)
        return path

    def home(self, user: User, where: str = "", mode: int = 0o700) -> Path:
        """A Home of `user` that passes every check, made by him: base/where (default
        base/<user>/home, like ~user/.agent-tty), with sessions/, both private."""
        home = self.base / (where or f"{user.name}/home")

        def make() -> None:
            home.mkdir(parents=True)
            os.chmod(home, mode)
            (home / "sessions").mkdir(mode=0o700)

        as_user(user, make)
        return home

    def run(self, user: User, home: Path, *args: str, as_owner: bool = False, timeout: float = 60) -> Result:
        """`agent-tty --json --home HOME [--as-owner] ARGS` as `user`."""
        argv = [*_cli_command(), "--json", "--home", str(home), *(["--as-owner"] if as_owner else []), *args]
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, env=_env(user, home), cwd="/", timeout=timeout, **_as(user)
            )
        except subprocess.TimeoutExpired:
            raise AssertionError(f"`{' '.join(args)}` as {user.name} blocked for {timeout} s") from None
        assert "Traceback" not in done.stderr, done.stderr
        result = Result(done.returncode, done.stdout, done.stderr)
        if args[0] == "create" and result.code == 0:  # its socket may lie outside base: removed at the end
            record = home / "sessions" / result.result["sessionId"] / "session.json"
            self.sockets.append(Path(json.loads(record.read_text())["socketPath"]))
        return result

    def sleeper(self, user: User) -> int:
        """`setsid sleep 300` of `user`, unrelated to any session: a process no record may reach."""
        process = subprocess.Popen(
            ["setsid", "sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, cwd="/", **_as(user)
        )
        self.sleepers.append(process)
        stat_file = Path(f"/proc/{process.pid}/stat")
        wait_until(lambda: int(stat_file.read_text().rpartition(")")[2].split()[3]) == process.pid, what="setsid")
        return process.pid

    def spawn_as(self, user: User, action: Callable[[], object]) -> int:
        pid = _fork_as(user, action)
        self.children.append(pid)
        return pid

    def capture(self, folder: Path) -> Capture:
        """The attacker's socket in `folder` (his), open to everyone, that logs what arrives."""
        path, log = folder / "evil.sock", folder / "received.log"
        pid = self.spawn_as(ATTACKER, lambda: _serve(path, log))
        wait_until(log.exists, what="the attacker's socket")
        return Capture(path, log, pid)

    def end(self, pid: int) -> None:
        """End a child of ours by pid (it cannot have been reused: we have not reaped it)."""
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        self.children.remove(pid)

    def close(self) -> None:
        for pid in list(self.children):
            self.end(pid)
        for process in self.sleepers:
            process.kill()
            process.wait()
        # Hosts and programs of any Home in here (AGENT_TTY_HOME names it), whoever runs them.
        for pid in _processes_under(self.base):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        # The sockets of the sessions this test created whose hosts were killed, not destroyed.
        for path in self.sockets:
            with contextlib.suppress(OSError):
                if stat.S_ISSOCK(os.lstat(path).st_mode):
                    os.unlink(path)
        shutil.rmtree(self.base, ignore_errors=True)


def _processes_under(base: Path) -> list[int]:
    marker = f"AGENT_TTY_HOME={base}/".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            env = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(entry.startswith(marker) for entry in env) and pid_alive(int(name)):
            found.append(int(name))
    return found


@pytest.fixture
def lab() -> Iterator[Lab]:
    lab = Lab()
    try:
        yield lab
    finally:
        lab.close()


def shared_home(lab: Lab) -> Path:
    """/tmp/shared as the attacker leaves it for others: his, mode 0777, with sessions/ 0777."""
    home = lab.folder(ATTACKER, "shared", 0o777)

    def make() -> None:
        (home / "sessions").mkdir()
        os.chmod(home / "sessions", 0o777)

    as_user(ATTACKER, make)
    return home


# ---------------------------------------------------------------- planted records act outside the Home


def test_list_in_a_shared_home_obeys_no_planted_record(lab: Lab) -> None:
    """Planted records in a Home another user made (mode 0777): a plain `list` by the victim
    must not unlink the file a manifest's socketPath names, SIGKILL a process a fake cgroup
    leaf (`/../../tmp/...`) lists, nor write through that leaf's `cgroup.freeze` link."""
    mine = lab.folder(VICTIM, "victim")
    socket_file, frozen = precious(mine / "notes.txt", VICTIM), precious(mine / "frozen.txt", VICTIM)
    sleeper = lab.sleeper(VICTIM)
    home = shared_home(lab)
    leaf = home / "fakeleaf"

    def attack() -> None:
        fake_leaf(leaf, [sleeper], freeze_link=frozen)
        plant(home / "sessions" / "s1", manifest("s1", str(socket_file)), dead_host(), cgroup_proof(leaf), mode=0o777)

    as_user(ATTACKER, attack)
    listed = lab.run(VICTIM, home, "list")
    assert pid_alive(sleeper), "the victim's process was killed through a planted cgroup proof"
    assert_intact(socket_file, frozen)
    assert_unsafe_home(listed, home, {"owner", "writable"}, owner=ATTACKER)


@dataclass(frozen=True)
class RootTargets:
    """What of root's the planted records name."""

    socket: Path
    """A file, named as a session's socket (unlinked once the session reads ended)."""
    frozen: Path
    """A file, linked as the fake leaf's cgroup.freeze (overwritten with 1, then 0)."""
    created: Path
    """No file yet, linked as a `destroyed` marker (created by the marker's write)."""
    folder: Path
    """An empty folder, named as a cgroup leaf (removed when the leaf is released)."""
    sleeper: int
    """A process, listed in the fake leaf's cgroup.procs (SIGKILLed)."""

    def assert_untouched(self) -> None:
        assert pid_alive(self.sleeper), "root's process was killed through a planted cgroup proof"
        assert_intact(self.socket, self.frozen)
        assert not self.created.exists(), "root created a file through a planted `destroyed` link"
        assert self.folder.is_dir(), "root removed its folder through a planted cgroup proof"


def _plant_root_attack(lab: Lab, home: Path) -> RootTargets:
    """The user's own Home, planted against root: s1 (running, host dead) names root's file as
    its socket, a fake leaf listing root's process with cgroup.freeze linked to root's file, and
    a `destroyed` link to where root would create a file; s2 (exited) names root's empty folder
    as its cgroup leaf; s3 is an ordinary ended session."""
    mine = lab.folder(ROOT, "root")
    root = RootTargets(
        socket=precious(mine / "socket-target", ROOT),
        frozen=precious(mine / "freeze-target", ROOT),
        created=mine / "created-through-destroyed",
        folder=mine / "empty-folder",
        sleeper=lab.sleeper(ROOT),
    )
    root.folder.mkdir(mode=0o755)
    leaf = home.parent / "fakeleaf"

    def attack() -> None:
        fake_leaf(leaf, [root.sleeper], freeze_link=root.frozen)
        sessions = home / "sessions"
        plant(sessions / "s1", manifest("s1", str(root.socket)), dead_host(), cgroup_proof(leaf))
        os.symlink(root.created, sessions / "s1" / "destroyed")
        ended = manifest("s2", str(mine / "no-socket"), status="exited")
        plant(sessions / "s2", ended, None, cgroup_proof(root.folder))
        plant(sessions / "s3", manifest("s3", str(home / "run" / "s3.sock"), status="exited", host_pid=None))

    as_user(ATTACKER, attack)
    return root


def test_root_refuses_a_users_home(lab: Lab) -> None:
    """Root on a user's Home (`agent-tty --home ~user/.agent-tty gc`): the user's planted records
    must not make root unlink, create or remove its files and folders, nor kill its process.
    Without --as-owner the command is refused up front."""
    home = lab.home(ATTACKER)
    root = _plant_root_attack(lab, home)
    collected = lab.run(ROOT, home, "gc")
    root.assert_untouched()
    assert_unsafe_home(collected, home, {"owner"}, owner=ATTACKER)


def test_root_as_owner_acts_with_the_owners_rights_only(lab: Lab) -> None:
    """`--as-owner gc` on a planted user Home runs as that user: the same records can reach
    nothing of root's, and gc still collects the Home's ordinary ended session."""
    home = lab.home(ATTACKER)
    root = _plant_root_attack(lab, home)
    collected = lab.run(ROOT, home, "gc", as_owner=True)
    root.assert_untouched()
    assert collected.code == 0, (collected.stdout, collected.stderr)
    assert "s3" in collected.result["removedSessions"], collected.result


def test_root_as_owner_creates_the_owners_session(lab: Lab) -> None:
    """Root never acts in a user's Home as root: a plain `create` there is refused and writes
    nothing; with --as-owner the session (folder, host, program) is the user's."""
    home = lab.home(VICTIM)
    before = tree(home)
    plain = lab.run(ROOT, home, "create", "--", "sleep", "300")
    try:
        assert tree(home) == before, "root wrote into the user's Home"
        assert_unsafe_home(plain, home, {"owner"}, owner=VICTIM)
    finally:
        if plain.code == 0:  # the old code: root's session in the user's Home (a cgroup leaf to free)
            lab.run(ROOT, home, "destroy", "--force", plain.result["sessionId"])
    created = lab.run(ROOT, home, "create", "--", "sleep", "300", as_owner=True)
    assert created.code == 0, (created.stdout, created.stderr)
    session = created.result
    assert (home / "sessions" / session["sessionId"]).stat().st_uid == VICTIM.uid
    groups = {str(g) for g in os.getgrouplist(VICTIM.name, VICTIM.gid)}
    for pid in (session["hostPid"], session["childPid"]):
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        assert status["Uid"].split() == [str(VICTIM.uid)] * 4, (pid, status["Uid"])
        assert status["Gid"].split() == [str(VICTIM.gid)] * 4, (pid, status["Gid"])
        assert set(status["Groups"].split()) <= groups, (pid, status["Groups"])
    destroyed = lab.run(ROOT, home, "destroy", session["sessionId"], as_owner=True)
    assert destroyed.code == 0 and destroyed.result["status"] == "destroyed", destroyed.stdout


# ---------------------------------------------------------------- gc and a swapped `sessions`


def _plant_fifo_session(home: Path) -> None:
    """An ended (exited) session named `projects` whose program.json is a FIFO: a reader that
    blocks on it lets the swapper time its swap just before gc removes the folder; a reader
    that refuses it (not a regular file) cannot check the group, so gc keeps the session."""
    folder = home / "sessions" / "projects"
    plant(folder, manifest("projects", str(home / "run" / "projects.sock"), status="exited", host_pid=None))
    os.mkfifo(folder / "program.json", 0o600)


def _swap_when_read(home: Path, target: Path) -> Callable[[], None]:
    """Once a reader waits on the FIFO: `sessions` becomes a link to `target`, then the FIFO
    gives the reader an empty record. Gives up after 30 s (a reader that never blocks)."""

    def swap() -> None:
        fifo = home / "sessions" / "projects" / "program.json"
        deadline = time.monotonic() + 30
        while True:
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as err:
                if err.errno != errno.ENXIO or time.monotonic() > deadline:
                    return
                time.sleep(0.005)
        os.rename(home / "sessions", home / "sessions.real")
        os.symlink(target, home / "sessions")
        os.close(fd)

    return swap


def _projects(owner: User, folder: Path) -> Path:
    """`folder/projects/work.txt`, the victim's work, named like a valid session id."""
    projects = folder / "projects"
    projects.mkdir(mode=0o755)
    os.chown(projects, owner.uid, owner.gid)
    return precious(projects / "work.txt", owner)


def test_root_gc_never_removes_through_a_swapped_sessions_link(lab: Lab) -> None:
    """The owner of a Home swaps `sessions` for a link to root's folder between gc's checks and
    its removal (timed by a FIFO program.json): root's `projects` must survive."""
    work = _projects(ROOT, lab.folder(ROOT, "root"))
    home = lab.home(ATTACKER)
    as_user(ATTACKER, lambda: _plant_fifo_session(home))
    swapper = lab.spawn_as(ATTACKER, _swap_when_read(home, work.parent.parent))
    collected = lab.run(ROOT, home, "gc", timeout=30)
    lab.end(swapper)
    assert_intact(work)
    assert_unsafe_home(collected, home, {"owner"}, owner=ATTACKER)


def test_gc_never_blocks_on_a_fifo_nor_follows_a_swapped_sessions_link(lab: Lab) -> None:
    """In the victim's own Home, a FIFO program.json and a `sessions` swapped for a link to the
    victim's folder mid-gc: gc neither waits on the FIFO nor removes `projects` outside the Home;
    it skips that session with a reason and still collects the other ended one."""
    home = lab.home(VICTIM)
    work = _projects(VICTIM, home.parent)

    def prepare() -> None:
        _plant_fifo_session(home)
        ended = manifest("other", str(home / "run" / "other.sock"), status="exited", host_pid=None)
        plant(home / "sessions" / "other", ended)

    as_user(VICTIM, prepare)
    swapper = lab.spawn_as(VICTIM, _swap_when_read(home, home.parent))
    collected = lab.run(VICTIM, home, "gc", timeout=20)
    lab.end(swapper)
    assert_intact(work)
    assert collected.code == 0, (collected.stdout, collected.stderr)
    assert collected.result["removedSessions"] == ["other"], collected.result
    assert [s["sessionId"] for s in collected.result["skippedSessions"]] == ["projects"], collected.result


# ---------------------------------------------------------------- input capture


def test_type_in_a_shared_home_never_reaches_the_attackers_socket(lab: Lab) -> None:
    """The owner of a shared `sessions/` renames the victim's live session folder and plants one
    whose socketPath is his own socket: the victim's `type` must not send him the secret."""
    home = shared_home(lab)
    evil = lab.capture(lab.folder(ATTACKER, "attacker"))
    created = lab.run(VICTIM, home, "create", "--", "sleep", "300")
    if created.code == 0:  # the old code: a live session of the victim, taken over
        session_id = created.result["sessionId"]
        sessions = home / "sessions"
        as_user(ATTACKER, lambda: os.rename(sessions / session_id, sessions / f"{session_id}-old"))
    else:  # refused up front: the attacker plants the session the victim will address anyway
        assert_unsafe_home(created, home, {"owner", "writable"}, owner=ATTACKER)
        session_id = "victimsession"
    folder = home / "sessions" / session_id
    as_user(ATTACKER, lambda: plant(folder, manifest(session_id, str(evil.path), host_pid=evil.pid), mode=0o777))
    typed = lab.run(VICTIM, home, "type", session_id, SECRET)
    assert SECRET.encode() not in evil.received(), "the victim's input reached the attacker's socket"
    assert_unsafe_home(typed, home, {"owner", "writable"}, owner=ATTACKER)


def test_type_never_follows_a_session_folder_of_another_user(lab: Lab) -> None:
    """A session folder owned by another user inside the victim's Home (what root or a once
    shared Home could leave) names the attacker's socket: never followed (UNSAFE_HOME for that
    session, exit 8)."""
    home = lab.home(VICTIM)
    evil = lab.capture(lab.folder(ATTACKER, "attacker"))
    folder = home / "sessions" / "s1"
    plant(folder, manifest("s1", str(evil.path), host_pid=evil.pid))
    chown_tree(folder, ATTACKER)
    typed = lab.run(VICTIM, home, "type", "s1", SECRET)
    assert SECRET.encode() not in evil.received(), "the victim's input reached the attacker's socket"
    assert typed.code == 8 and typed.error["code"] == "UNSAFE_HOME", typed.stdout
    assert typed.error["details"]["problem"] == "owner" and typed.error["details"]["path"] == str(folder)


def test_type_never_connects_to_a_socket_outside_the_sessions_socket_folder(lab: Lab) -> None:
    """The victim's own manifest names a socket that is not `<private folder>/<id>.sock` (the
    attacker's, in his folder): nothing is sent."""
    home = lab.home(VICTIM)
    evil = lab.capture(lab.folder(ATTACKER, "attacker"))
    planted = manifest("s1", str(evil.path), host_pid=evil.pid)
    as_user(VICTIM, lambda: plant(home / "sessions" / "s1", planted, mode=0o700))
    typed = lab.run(VICTIM, home, "type", "s1", SECRET)
    assert SECRET.encode() not in evil.received(), "the victim's input reached the attacker's socket"
    assert typed.code != 0 and typed.error["code"] in ("STORAGE_ERROR", "HOST_UNREACHABLE"), typed.stdout


def test_type_never_sends_to_a_peer_of_another_user(lab: Lab) -> None:
    """Everything on disk is the victim's (`<home>/run/s1.sock`, a socket file of his in his 0700
    folder), but the process listening on it is the attacker's: SO_PEERCRED says so, nothing is sent."""
    home = lab.home(VICTIM)
    evil = lab.capture(lab.folder(ATTACKER, "attacker"))
    run = home / "run"

    def prepare() -> None:
        run.mkdir(mode=0o700)
        plant(home / "sessions" / "s1", manifest("s1", str(run / "s1.sock"), host_pid=evil.pid), mode=0o700)

    as_user(VICTIM, prepare)
    os.rename(evil.path, run / "s1.sock")  # the bound socket keeps listening under its new name
    os.lchown(run / "s1.sock", VICTIM.uid, VICTIM.gid)
    typed = lab.run(VICTIM, home, "type", "s1", SECRET)
    assert SECRET.encode() not in evil.received(), "the victim's input reached the attacker's listener"
    assert typed.code != 0 and typed.error["code"] in ("STORAGE_ERROR", "HOST_UNREACHABLE"), typed.stdout


# ---------------------------------------------------------------- denial of service


def _serving(folder: Path) -> bool:
    """Whether a host answers on a socket in `folder` (a session of that user is live)."""
    for entry in folder.glob("*.sock"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(1)
            try:
                probe.connect(str(entry))
                return True
            except OSError:
                continue
    return False


@contextlib.contextmanager
def _moved_aside(path: Path) -> Iterator[None]:
    """Keep what a previous run left at a fixed path in /tmp, and put it back afterwards; never
    while a live session's socket is in it (another run of the suite uses it)."""
    saved = path.with_name(f"{path.name}.saved-by-test-{os.getpid()}")
    if path.is_dir() and not path.is_symlink() and _serving(path):
        pytest.skip(f"{path} holds the socket of a live session of {VICTIM.name}")
    if os.path.lexists(path):
        os.rename(path, saved)
    try:
        yield
    finally:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.unlink(path)
        if os.path.lexists(saved):
            os.rename(saved, path)


@pytest.mark.parametrize("length", ["short", "long"])
def test_a_squatted_socket_folder_never_stops_create(lab: Lab, length: str) -> None:
    """Any user can `mkdir -m700 /tmp/agent-tty-<victim uid>` first (no XDG_RUNTIME_DIR): the
    victim's create must still work, with a socket outside the squatter's folder. A long Home
    has no room for `run/<id>.sock`, so the fallback in /tmp is what is tested there."""
    squatted = Path(f"/tmp/agent-tty-{VICTIM.uid}")
    home = lab.home(VICTIM, "v" if length == "short" else f"{VICTIM.name}/{'h' * 80}/home")
    with _moved_aside(squatted):
        as_user(ATTACKER, lambda: os.mkdir(squatted, 0o700))
        created = lab.run(VICTIM, home, "create", "--", "sleep", "300")
        assert created.code == 0, (created.stdout, created.stderr)
        session_id = created.result["sessionId"]
        socket_path = Path(json.loads((home / "sessions" / session_id / "session.json").read_text())["socketPath"])
        try:
            assert squatted not in socket_path.parents, socket_path
            typed = lab.run(VICTIM, home, "type", session_id, "hello")
            assert typed.code == 0, typed.stdout
            destroyed = lab.run(VICTIM, home, "destroy", session_id)
            assert destroyed.code == 0, destroyed.stdout
        finally:
            lab.run(VICTIM, home, "destroy", "--force", session_id)
            if home not in socket_path.parents:
                try:
                    os.rmdir(socket_path.parent)  # a fresh private folder in /tmp, now empty
                except OSError:
                    pass
        assert os.lstat(squatted).st_uid == ATTACKER.uid  # the squatter's folder is left alone


# ---------------------------------------------------------------- refused up front, touching nothing


def _planted_socket_target(lab: Lab, sessions: Path, planter: User) -> Path:
    """A session with a dead host (and no program to wait for) naming the victim's file as its
    socket: any reconcile would record it failed and unlink that file."""
    target = precious(lab.folder(VICTIM, "victim-files") / "notes.txt", VICTIM)
    as_user(planter, lambda: plant(sessions / "s1", manifest("s1", str(target)), dead_host(), mode=0o777))
    return target


@dataclass(frozen=True)
class Unsafe:
    """A Home the victim must not use, the folder at fault, its owner, and the file a planted
    record names (None where the attacker cannot plant)."""

    home: Path
    at_fault: Path
    owner: User
    problems: set[str]
    target: Path | None = None


def _shared(lab: Lab) -> Unsafe:
    home = shared_home(lab)
    target = _planted_socket_target(lab, home / "sessions", ATTACKER)
    return Unsafe(home, home, ATTACKER, {"owner", "writable"}, target)


def _writable_sessions(lab: Lab) -> Unsafe:
    home = lab.home(VICTIM, mode=0o711)  # others may pass through, not write
    sessions = home / "sessions"
    as_user(VICTIM, lambda: os.chmod(sessions, 0o777))
    return Unsafe(home, sessions, VICTIM, {"writable"}, _planted_socket_target(lab, sessions, ATTACKER))


def _group_writable_home(lab: Lab) -> Unsafe:
    home = lab.home(VICTIM, mode=0o770)
    return Unsafe(home, home, VICTIM, {"writable"})


def _linked_sessions(lab: Lab) -> Unsafe:
    home = lab.home(VICTIM)
    elsewhere = lab.folder(ATTACKER, "attacker-sessions", 0o777)
    target = _planted_socket_target(lab, elsewhere, ATTACKER)

    def link() -> None:
        (home / "sessions").rmdir()
        os.symlink(elsewhere, home / "sessions")

    as_user(VICTIM, link)
    return Unsafe(home, home / "sessions", VICTIM, {"not-a-directory"}, target)


def _open_ancestor(lab: Lab) -> Unsafe:
    above = lab.folder(ATTACKER, "open", 0o777)  # writable by all, no sticky bit: he can swap the Home

    def make() -> None:
        (above / "home").mkdir(mode=0o700)
        (above / "home" / "sessions").mkdir(mode=0o700)

    as_user(VICTIM, make)
    return Unsafe(above / "home", above, ATTACKER, {"ancestor"})


@pytest.mark.parametrize(
    "shape",
    [_shared, _writable_sessions, _group_writable_home, _linked_sessions, _open_ancestor],
    ids=lambda shape: shape.__name__[1:],
)
def test_an_unsafe_home_is_refused_up_front(lab: Lab, shape: Callable[[Lab], Unsafe]) -> None:
    """A Home whose root or sessions/ another user owns or may write, whose sessions/ is a link,
    or under a folder another user may write without the sticky bit: `list` obeys nothing in
    it, changes nothing, and says which folder is at fault."""
    unsafe = shape(lab)
    before = tree(lab.base)
    listed = lab.run(VICTIM, unsafe.home, "list")
    if unsafe.target is not None:
        assert_intact(unsafe.target)
    assert tree(lab.base) == before, "the command changed the Home"
    assert_unsafe_home(listed, unsafe.at_fault, unsafe.problems, owner=unsafe.owner)


@pytest.mark.parametrize(
    "command",
    [
        ("list", "--all"),
        ("gc",),
        ("inspect", "s1"),
        ("snapshot", "s1"),
        ("type", "s1", SECRET),
        ("destroy", "s1"),
        ("destroy", "--force", "s1"),
        ("create", "--", "sleep", "300"),
    ],
    ids=" ".join,
)
def test_every_command_refuses_a_shared_home(lab: Lab, command: tuple[str, ...]) -> None:
    """Not only list: every command on a Home another user made refuses before it reads,
    writes, connects or signals anything."""
    home = shared_home(lab)
    target = _planted_socket_target(lab, home / "sessions", ATTACKER)
    before = tree(lab.base)
    done = lab.run(VICTIM, home, *command)
    assert_intact(target)
    assert tree(lab.base) == before, "the command changed the Home"
    assert_unsafe_home(done, home, {"owner", "writable"}, owner=ATTACKER)


# ---------------------------------------------------------------- records never followed, never waited on


def test_records_of_others_links_and_fifos_are_skipped(lab: Lab) -> None:
    """In the victim's own Home: a session folder of another user, a session.json of another
    user, a session.json that links to a file elsewhere, and one that is a FIFO (every reader
    blocks on it): `list` and `gc` never follow or wait on them, skip those sessions with
    STORAGE_ERROR (UNSAFE_HOME for the foreign folder), and still serve the ordinary one."""
    home = lab.home(VICTIM)
    sessions = home / "sessions"
    elsewhere = lab.folder(VICTIM, "victim-files") / "manifest.json"

    def ended(session_id: str) -> dict[str, Any]:
        return manifest(session_id, str(home / "run" / f"{session_id}.sock"), status="exited", host_pid=None)

    def prepare() -> None:
        plant(sessions / "good", ended("good"))
        write_json(elsewhere, ended("linked"))
        (sessions / "linked").mkdir()
        os.symlink(elsewhere, sessions / "linked" / "session.json")
        (sessions / "fifo").mkdir()
        os.mkfifo(sessions / "fifo" / "session.json", 0o600)

    as_user(VICTIM, prepare)
    for session_id, owner in (("foreign", ATTACKER), ("foreignrecord", VICTIM)):
        plant(sessions / session_id, ended(session_id))
        chown_tree(sessions / session_id, owner)
    os.lchown(sessions / "foreignrecord" / "session.json", ATTACKER.uid, ATTACKER.gid)
    bad = {"fifo", "foreign", "foreignrecord", "linked"}

    listed = lab.run(VICTIM, home, "list", "--all", timeout=20)
    assert listed.code == 0, (listed.stdout, listed.stderr)
    assert [s["sessionId"] for s in listed.result["sessions"]] == ["good"], listed.result
    unreadable = {entry["sessionId"]: entry["code"] for entry in listed.result["unreadable"]}
    assert unreadable == {**dict.fromkeys(bad, "STORAGE_ERROR"), "foreign": "UNSAFE_HOME"}, listed.result["unreadable"]
    collected = lab.run(VICTIM, home, "gc", timeout=20)
    assert collected.code == 0, (collected.stdout, collected.stderr)
    assert collected.result["removedSessions"] == ["good"], collected.result
    assert {s["sessionId"] for s in collected.result["skippedSessions"]} == bad, collected.result
    assert elsewhere.is_file() and json.loads(elsewhere.read_text())["sessionId"] == "linked"
