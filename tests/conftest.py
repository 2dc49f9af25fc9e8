"""Fixtures that drive the real CLI against a temp Home, and check that no process is left."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
REPLAY_DIR = Path(__file__).resolve().parent / "replay"

# A runner that starts the suite in the background of a non-interactive shell hands it SIGINT
# ignored, and every CLI we start would inherit that: tests that press Ctrl-C need the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


PINNED_MECHANISM = os.environ.get("AGENT_TTY_MECHANISM") or None
"""The mechanism the whole run is pinned to (`AGENT_TTY_MECHANISM=macos_ps pytest ...`): every
Cli passes it on; tests about another mechanism (a token, a cgroup leaf) pin theirs themselves."""


PINNED_TRANSPORT = os.environ.get("AGENT_TTY_TRANSPORT") or None
"""The host transport the whole run is pinned to (`AGENT_TTY_TRANSPORT=loopback`: the Windows
transport, an authenticated loopback port, on Linux): every Cli passes it on."""


NOT_PINNED = pytest.mark.skipif(
    PINNED_MECHANISM is not None or PINNED_TRANSPORT is not None,
    reason="about the output and the protocol, not the mechanism: the plain pass runs it",
)
"""For a whole module (`pytestmark = NOT_PINNED`) whose tests no mechanism changes: the pinned
passes (scripts/test) skip it, which keeps CI within its time."""


def default_mechanism() -> str:
    """What new sessions get here: the pinned mechanism, else cgroup leaves where this user may
    make them, else autogroup."""
    if PINNED_MECHANISM:
        return PINNED_MECHANISM
    from agent_tty_plugins.linux_cgroup import probe

    return "linux_cgroup" if probe()[0].usable else "linux_autogroup"


def agent_tty_command() -> list[str]:
    script = Path(sys.executable).with_name("agent-tty")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agent_tty"]


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def doc(self) -> dict[str, Any]:
        return json.loads(self.stdout)

    @property
    def result(self) -> dict[str, Any]:
        doc = self.doc
        assert doc["ok"] is True, doc
        return doc["result"]

    @property
    def error(self) -> dict[str, Any]:
        doc = self.doc
        assert doc["ok"] is False, doc
        return doc["error"]


class Cli:
    """Runs `agent-tty --json ...` as a subprocess with AGENT_TTY_HOME set to the test's Home."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.command = agent_tty_command()
        self.pin: str | None = PINNED_MECHANISM

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_TTY_")}
        env["AGENT_TTY_HOME"] = str(self.home)
        # The programs get an empty user home: an interactive `bash` reads ~/.bashrc, and a
        # machine's rc (e.g. `pyenv init`, whose rehash waits on a lock that a session killed
        # mid-rc leaves behind) would make the first prompt late by a minute and the tests flaky.
        user_home = self.user_home()
        if user_home is not None:
            env["HOME"] = str(user_home)
        if self.pin:
            env["AGENT_TTY_MECHANISM"] = self.pin
        if PINNED_TRANSPORT:
            env["AGENT_TTY_TRANSPORT"] = PINNED_TRANSPORT
        env.update(extra or {})
        return env

    def user_home(self) -> Path | None:
        folder = self.home.parent / f"{self.home.name}-user"
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:  # a Home beside which this user cannot write: keep the caller's HOME
            return None
        return folder

    def run(self, *args: str, json_out: bool = True, env: dict[str, str] | None = None, timeout: float = 60) -> Result:
        argv = [*self.command, *(["--json"] if json_out else []), *args]
        done = subprocess.run(argv, capture_output=True, text=True, env=self.env(env), timeout=timeout)
        assert "Traceback" not in done.stderr, done.stderr
        return Result(done.returncode, done.stdout, done.stderr)

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        argv = [*self.command, "--json", *args]
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env(env))

    def create(self, *program: str, options: tuple[str, ...] = ()) -> dict[str, Any]:
        done = self.run("create", *options, "--", *program)
        assert done.code == 0, (done.stdout, done.stderr)
        return done.result

    def folder(self, session_id: str) -> Path:
        return self.home / "sessions" / session_id

    def manifest(self, session_id: str) -> dict[str, Any]:
        return json.loads((self.folder(session_id) / "session.json").read_text())

    def program(self, session_id: str) -> dict[str, Any]:
        return json.loads((self.folder(session_id) / "program.json").read_text())

    def replay_env(self, hold: str, log: Path) -> dict[str, str]:
        path = os.pathsep.join(filter(None, [str(REPLAY_DIR), os.environ.get("PYTHONPATH", "")]))
        return {"PYTHONPATH": path, "AGENT_TTY_REPLAY_HOLD": hold, "AGENT_TTY_REPLAY_LOG": str(log)}


HAS_GHOSTTY = importlib.util.find_spec("pyghostty") is not None
# Ghostty's engine comes with agent-tty[fast] (scripts/quickstart installs it); a plain install,
# such as the typer-range venvs or a musl machine, has pyte only.
NO_GHOSTTY = pytest.mark.skipif(not HAS_GHOSTTY, reason="pyghostty is not installed (agent-tty[fast])")
BACKENDS = [pytest.param("ghostty", marks=NO_GHOSTTY), "pyte"]
"""The host's screen backends, as test params (ids `ghostty` and `pyte`)."""


def wait_until(check: Callable[[], Any], timeout: float = 10.0, interval: float = 0.02, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(interval)


def beats(beat: Path, within: float) -> bool:
    """A fork chain (tests/fixtures/fork_chain.py) writes its beat file again within `within` s.
    Under load, or while a judgement holds the chain stopped, a beat may be late: wait for one."""
    first = beat.read_text()
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if beat.read_text() != first:
            return True
    return False


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def group_members(pgid: int) -> list[int]:
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as handle:
                fields = handle.read().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(name))
    return members


def processes_of_home(home: Path) -> list[int]:
    """Live processes whose environment names this Home: hosts and every program they ran."""
    marker = f"AGENT_TTY_HOME={home}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                env = handle.read().split(b"\0")
        except OSError:
            continue
        if marker in env and pid_alive(int(name)):
            found.append(int(name))
    return found


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    home = tmp_path / "home"
    client = Cli(home)
    yield client
    # Every test leaves no process behind: end its sessions, then fail on any survivor.
    sessions = home / "sessions"
    if sessions.is_dir():
        for session_id in os.listdir(sessions):
            client.run("destroy", "--force", session_id, timeout=30)
        client.run("gc", timeout=60)  # removes the folders and frees what they held (cgroup leaves)
    survivors = []
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        survivors = processes_of_home(home)
        if not survivors:
            break
        time.sleep(0.05)
    described = [_describe(pid) for pid in survivors]
    for pid in survivors:
        try:
            os.kill(pid, signal.SIGKILL)  # ours: it carries this test's unique Home
        except ProcessLookupError:
            pass
    assert not survivors, f"processes left behind: {described}"
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.fixture(params=BACKENDS)
def tty(request, cli: Cli) -> Cli:  # type: ignore[no-untyped-def]
    """The CLI, with the host's screen backend chosen for the whole test (`tty.backend`)."""
    original = cli.env

    def env(extra=None):  # type: ignore[no-untyped-def]
        return original({"AGENT_TTY_SCREEN": request.param, **(extra or {})})

    cli.env = env  # type: ignore[method-assign]
    cli.backend = request.param  # type: ignore[attr-defined]
    return cli


def _describe(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        session = next((e.split(b"=", 1)[1].decode() for e in env if e.startswith(b"AGENT_TTY_SESSION_ID=")), "-")
        stat = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return f"{pid} (gone)"
    return f"{pid} pgid={stat[2]} session={session} {argv!r}"


@pytest.fixture
def unrelated(tmp_path: Path) -> Iterator[Callable[[], int]]:
    """Start `setsid sleep 300` processes that are not any session's; ended by pid at teardown."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> int:
        process = subprocess.Popen(
            ["setsid", "sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        started.append(process)
        wait_until(lambda: _leads_session(process.pid), what="setsid")
        return process.pid

    yield start
    for process in started:
        process.kill()
        process.wait()


def _leads_session(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return False
    return int(fields[3]) == pid
