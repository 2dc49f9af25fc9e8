"""The core carries no OS difference of its own: agent_tty/platform/system.py and the plugins do.

Two checks. A scan of agent_tty/ fails on any direct use of a POSIX-only module, call, constant
or Popen argument outside system.py, except the few listed below with the reason each stays.
And a run under a simulated Windows and macOS, with the POSIX-only modules unimportable (and,
for Windows, the POSIX-only os, socket and signal names removed), imports every core module,
reads records and key names (the engine's pure parts) and runs `doctor --json`, which must
answer with an envelope, never a traceback.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "agent_tty"
SYSTEM = CORE / "platform" / "system.py"
# The plugin kit starts, signals and reaps real processes to test POSIX plugins; it is test
# support, not the core (a Windows kit comes with the windows_conpty plugin).
TESTING = CORE / "testing"

POSIX_MODULES = {"fcntl", "termios", "pty", "tty", "resource", "grp", "pwd"}
POSIX_NAMES = {
    "os": {
        "geteuid", "getuid", "getegid", "getgid", "setuid", "setgid", "setgroups", "getgrouplist",
        "setsid", "killpg", "getpgid", "getsid", "fork", "openpty", "kill", "pipe2",
        "O_NOFOLLOW", "O_DIRECTORY", "O_CLOEXEC",
    },
    "socket": {"AF_UNIX", "SO_PEERCRED"},
    "signal": {"SIGKILL", "SIGHUP", "SIGCHLD", "SIGSTOP", "SIGCONT", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH"},
}
POSIX_KEYWORDS = {"start_new_session", "preexec_fn", "process_group", "dir_fd", "src_dir_fd", "dst_dir_fd"}

# What stays, and why. A new use anywhere (also in these files) fails the scan.
ALLOWED: dict[tuple[str, str], str] = {
    ("host/signals.py", "signal.SIGCHLD"): "where it exists, the host wakes on SIGCHLD; on Windows the program's output ends",
    ("host/signals.py", "signal.SIGHUP"): "where it exists, the host ignores a stray hang-up",
    ("host/signals.py", "os.pipe2"): "where it exists, the host's wake-up pipe; elsewhere a socket pair",
    ("host/signals.py", "os.O_CLOEXEC"): "the flags of that pipe",
    **{
        ("platform/inherited.py", what): "the process facts a spare host's program would inherit, read after the Windows return"
        for what in ("import resource", "os.getuid", "os.geteuid", "os.getgid", "os.getegid")
    },
    **{
        ("dashboard/app.py", what): "the live dashboard is a POSIX terminal program (raw mode, resize, hang-up); "
        "where termios does not import it says so and --once still works (ADR 0043)"
        for what in ("import termios", "signal.SIGWINCH", "signal.SIGHUP")
    },
    **{
        ("storage/fs.py", what): "where System.dir_fds: opens refuse links and steps go through the folder's fd"
        for what in ("os.O_NOFOLLOW", "os.O_DIRECTORY", "os.O_CLOEXEC", "dir_fd=", "src_dir_fd=", "dst_dir_fd=")
    },
}


def _uses(path: Path) -> list[tuple[int, str]]:
    """Each POSIX-only use in one file: (line, what)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    aliases: dict[str, str] = {}  # local name -> module, for `import signal as signals`
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                aliases[alias.asname or top] = top
                if top in POSIX_MODULES:
                    found.append((node.lineno, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            if top in POSIX_MODULES:
                found.append((node.lineno, f"from {node.module} import"))
            for alias in node.names:
                if alias.name in POSIX_NAMES.get(top, ()):
                    found.append((node.lineno, f"{top}.{alias.name}"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = aliases.get(node.value.id)
            if module in POSIX_NAMES and node.attr in POSIX_NAMES[module]:
                found.append((node.lineno, f"{module}.{node.attr}"))
        elif isinstance(node, ast.keyword) and node.arg in POSIX_KEYWORDS:
            found.append((node.lineno, f"{node.arg}="))
    return found


def test_the_core_uses_no_posix_only_name_outside_the_system_layer() -> None:
    problems = []
    for path in sorted(CORE.rglob("*.py")):
        if path == SYSTEM or TESTING in path.parents:
            continue
        relative = path.relative_to(CORE).as_posix()
        for line, what in _uses(path):
            if (relative, what) not in ALLOWED:
                problems.append(f"agent_tty/{relative}:{line}: {what}")
    assert not problems, "POSIX-only uses in the core; ask agent_tty.platform.system instead:\n" + "\n".join(problems)


def test_the_scan_sees_a_planted_use(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import os, socket, signal as s\nimport fcntl\n"
        "os.geteuid(); socket.socket(socket.AF_UNIX); s.SIGKILL\n"
        "import subprocess\nsubprocess.Popen(['x'], start_new_session=True)\n"
    )
    assert sorted(what for _line, what in _uses(planted)) == sorted(
        ["import fcntl", "os.geteuid", "socket.AF_UNIX", "signal.SIGKILL", "start_new_session="]
    )


SIMULATION = r"""
import contextlib, importlib, importlib.util, io, json, os, pkgutil, signal, socket, subprocess, sys, selectors, tempfile

TARGET = sys.argv[1]
BLOCKED = set(sys.argv[2].split(","))
# Libraries that pick their own backend by sys.platform at import (click's Windows console)
# are loaded for the real system first: the simulation tests our code, not theirs.
import click, pluggy, typer  # noqa: E401
# The MCP SDK (agent_tty.mcp's, with anyio and pydantic) picks asyncio's and its stdio's backend too.
import anyio.to_thread, mcp_types, pydantic, mcp.server.mcpserver, mcp.server.mcpserver.exceptions  # noqa: E401
for name in BLOCKED:
    sys.modules.pop(name, None)


class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is POSIX-only: blocked by the test")
        return None


sys.meta_path.insert(0, Blocker())
sys.platform = TARGET
if TARGET == "win32":
    for module, names in json.loads(sys.argv[3]).items():
        for name in names:
            if hasattr(sys.modules[module], name):
                delattr(sys.modules[module], name)

    def loopback_socketpair(family=socket.AF_INET, type=socket.SOCK_STREAM, proto=0):
        # What CPython's socket.socketpair is on Windows: two ends of a loopback connection.
        with socket.socket(family, type, proto) as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(1)
            a = socket.create_connection(listener.getsockname())
            b, _ = listener.accept()
        return a, b

    socket.socketpair = loopback_socketpair

    # The Win32 calls themselves (ctypes on kernel32/advapi32) cannot run here: stand-ins with
    # their answers for a private Home, so the storage path without dir fds runs below.
    from agent_tty.platform import win32_files
    from agent_tty.platform.access import Access

    SID = "S-1-5-21-0-0-0-1001"
    win32_files.user_sid = lambda: SID
    win32_files.access = lambda path, me: Access(SID, False, False, False, "O:" + SID + "D:P(A;OICI;FA;;;" + SID + ")")
    win32_files.fd_owner = lambda fd: SID
    win32_files.open_file = lambda path, flags, me: os.open(path, flags, 0o600)
    win32_files.mkdir_private = lambda path, me: os.mkdir(path, 0o700)
    win32_files.replace = lambda source, target: os.replace(source, target)

import agent_tty

imported = []
for info in pkgutil.walk_packages(agent_tty.__path__, "agent_tty."):
    if info.name.endswith("__main__"):
        continue
    if info.name == "agent_tty.terminal.ghostty_screen" and importlib.util.find_spec("pyghostty") is None:
        continue  # the optional fast screen (agent-tty[fast]) is not installed here
    importlib.import_module(info.name)
    imported.append(info.name)

# The engine's pure parts: records, statuses, keys.
from agent_tty.protocol.status import is_terminal
from agent_tty.storage.records import Manifest
from agent_tty.terminal.keys import encode_key

assert is_terminal("destroyed") and encode_key("Enter") == b"\r"
try:
    Manifest.from_json(b'{"version": 1}', "session.json")
except ValueError:
    pass

from agent_tty.cli.main import main
from agent_tty.platform.system import current as current_system

os.environ["AGENT_TTY_HOME"] = os.path.join(tempfile.mkdtemp(), "home")
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["--json", "doctor"])

# The host's wake-up: a pipe where os.pipe2 exists, a socket pair elsewhere (Windows, whose
# select takes sockets only); a SIGTERM sets its flag and wakes a selector.
from agent_tty.host.signals import HostSignals

signals = HostSignals.install()
selector = selectors.DefaultSelector()
selector.register(signals.fd, selectors.EVENT_READ)
signal.raise_signal(signal.SIGTERM)
woke = bool(selector.select(5))
signals.drain()
drained = not selector.select(0)
wake = {"term": signals.term, "woke": woke, "drained": drained, "pair": signals._pair is not None}

# Storage: a Home made, a record written over and read back, the log rotated, a session folder
# removed; on win32 with no O_NOFOLLOW, O_DIRECTORY or dir_fd (storage/fs.py's path steps).
from pathlib import Path
from agent_tty.storage import files, segments
from agent_tty.storage.home import Home
from agent_tty.storage.records import Failure
from agent_tty.storage.trust import check_home

home = Home(Path(os.environ["AGENT_TTY_HOME"]))
home.ensure()
folder = home.sessions / "s1"
os.mkdir(folder, 0o700)
files.write_record(folder / "failure.json", Failure(reason="host-death", message="one"))
files.write_record(folder / "failure.json", Failure(reason="host-death", message="two"))
(folder / "events.jsonl").write_bytes(b"old\n")
with segments.open_folder(folder) as opened:
    fd = segments.write_next(opened, [b"new\n"])
    os.close(fd)
    segments.swap_in_next(opened, 3)
storage = {
    "trusted": check_home(home.root),
    "read": files.read_record(folder / "failure.json", Failure).message,
    "logs": [path.name for path in segments.log_files(folder)],
    "dirFds": current_system().dir_fds,
}
files.remove_session_folder(home.sessions, "s1")
storage["removed"] = not folder.exists()
print(json.dumps({"imported": imported, "code": code, "doctor": json.loads(out.getvalue()), "wake": wake, "storage": storage}))
"""


@pytest.mark.parametrize("target", ["win32", "darwin"])
def test_the_core_imports_and_doctor_answers_on_another_system(target: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SIMULATION, target, ",".join(sorted(POSIX_MODULES)),
         json.dumps({module: sorted(names) for module, names in POSIX_NAMES.items()})],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert "agent_tty.lifecycle.engine" in report["imported"] and "agent_tty.host.loop" in report["imported"]
    doctor = report["doctor"]
    assert doctor["command"] == "doctor" and doctor["ok"] is True, doctor
    assert doctor["result"]["platform"] == target
    assert report["wake"] == {"term": True, "woke": True, "drained": True, "pair": target == "win32"}, report["wake"]
    assert report["storage"] == {
        "trusted": True, "read": "two", "logs": ["events.3.jsonl", "events.jsonl"], "dirFds": target != "win32",
        "removed": True,
    }, report["storage"]
    if target == "win32":
        # windows_conpty's probe fails here (no pywinpty, no Win32 layer): no mechanism, exit 1;
        # hosts would serve the loopback transport.
        assert report["code"] == 1 and doctor["result"]["mechanism"] is None
        assert doctor["result"]["pty"]["ok"] is False
        assert doctor["result"]["transport"] == "loopback"
    else:
        names = [plugin["name"] for plugin in doctor["result"]["plugins"]]
        assert "linux_cgroup" not in names and "linux_autogroup" not in names, names
