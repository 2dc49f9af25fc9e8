"""Start-up hygiene: hot commands import nothing they do not need (agents call them hundreds of times)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pydantic", "pyte", "rich", "psutil")


def _modules_after(args: list[str], home: str) -> set[str]:
    code = (
        "import sys, json, io, contextlib\n"
        "from agent_tty.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main({args!r})\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"AGENT_TTY_HOME": home, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_version_loads_no_framework(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for args in (["--version"], ["version"], ["--json", "version"]):
        modules = _modules_after(args, str(tmp_path))
        for name in (
            "typer", "click", "pluggy", "typing", *HEAVY, "agent_tty.lifecycle.engine", "agent_tty.storage.records",
            "agent_tty.protocol.errors",  # its enum: imported only when an error is raised
        ):
            assert name not in modules, (args, name)


@pytest.mark.parametrize("args", [["list"], ["list", "--all"], ["inspect", "nosuchsession"], ["gc", "--dry-run"]])
def test_hot_commands_load_nothing_heavy(tmp_path, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    modules = _modules_after(args, str(tmp_path))
    for name in HEAVY:
        assert name not in modules and not any(m.startswith(name + ".") for m in modules), (args, name)
    # Other commands' modules stay unloaded.
    assert "agent_tty.lifecycle.create" not in modules
    assert "agent_tty.host.loop" not in modules


@pytest.mark.parametrize(
    "args",
    [
        ["snapshot", "nosuchsession"],
        ["send-keys", "nosuchsession", "Enter"],
        ["type", "nosuchsession", "x"],
        ["run", "nosuchsession", "true"],
        ["wait", "nosuchsession", "--text", "ready"],
        ["list"],
        ["inspect", "nosuchsession"],
        ["destroy", "nosuchsession"],
        ["gc"],
    ],
)
def test_hot_commands_are_parsed_without_typer_or_click(tmp_path, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    """Declared with typer, read from agent_tty/cli/argtable.py (docs/adr/0027)."""
    modules = _modules_after(args, str(tmp_path))
    for name in ("typer", "click"):
        assert name not in modules and not any(m.startswith(name + ".") for m in modules), (args, name)
    assert "agent_tty.cli.fastparse" in modules


def test_help_and_usage_errors_still_come_from_click(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for args in (["snapshot", "--help"], ["snapshot"], ["wait", "x", "--bogus"]):
        assert "click" in _modules_after(args, str(tmp_path)), args


def _loads_pydantic(modules: set[str]) -> bool:
    return any(m == "pydantic" or m.startswith(("pydantic.", "pydantic_core")) for m in modules)


def test_only_schema_loads_pydantic(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The schema models (agent_tty.schema) are pydantic; commands emit plain dicts and load
    neither (docs/adr/0018). Every command's module, through its --help, and a few real runs."""
    from agent_tty.cli.main import COMMANDS

    runs = [[name, "--help"] for name in COMMANDS if name != "schema"]
    runs += [["--json", "version"], ["snapshot", "nosuch"], ["type", "nosuch", "x"], ["wait", "nosuch", "--exit"], ["schema", "--help"]]
    for args in runs:
        modules = _modules_after(args, str(tmp_path))
        assert not _loads_pydantic(modules), (args, sorted(m for m in modules if "pydantic" in m or m.startswith("agent_tty.schema")))
        assert "agent_tty.schema" not in modules, args
    # The check sees pydantic where it is loaded.
    assert _loads_pydantic(_modules_after(["schema", "version"], str(tmp_path)))


SLOW_STDLIB = ("dataclasses", "inspect", "ast", "dis", "tokenize", "platform", "importlib", "typing", "socket", "selectors")
"""What a hot command's start-up no longer pays for (issue 26, docs/adr/0036): dataclasses (and
inspect, ast, dis, tokenize, which it pulls in) for classes of a few fields, the stdlib `platform`,
importlib (and its warnings) to import the command's module, typing for annotations, and the
socket module (its enums, selectors) for one request to the host (a plain `_socket.socket`)."""


@pytest.mark.parametrize(
    "args",
    [
        ["snapshot", "{id}"],
        ["--json", "snapshot", "{id}"],
        ["wait", "{id}", "--text", "bash"],
        ["send-keys", "{id}", "End"],
        ["type", "{id}", " "],
        ["run", "{id}", "true"],
    ],
)
def test_hot_commands_on_a_live_session_load_no_slow_stdlib(cli, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    """Against a live host, so the path through the manifest, the trust checks and the RPC is the
    one every real call takes (a missing session stops before the socket)."""
    sid = cli.create("bash", "--norc", "-i")["sessionId"]
    assert cli.run("wait", sid, "--text", "bash", "--timeout", "10s").code == 0
    modules = _modules_after([a.format(id=sid) for a in args], str(cli.home))
    assert "agent_tty.protocol.rpc" in modules  # it did reach the host
    # An editable install (`pip install -e .`, which scripts/guard_mutations.py needs) puts its own
    # finder on the import path, and the finder imports importlib: a real install has none.
    editable = any(module.startswith("__editable__") for module in modules)
    for name in SLOW_STDLIB:
        if not (editable and name == "importlib"):
            assert name not in modules, (args, name)


@pytest.mark.parametrize("args", [["list"], ["--json", "list"], ["inspect", "{id}"], ["--json", "inspect", "{id}"]])
def test_list_and_inspect_of_a_live_session_load_neither_pluggy_nor_slow_stdlib(cli, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    """They judge the host through the session's built-in plugin, called without pluggy (its
    import and inspect's cost ~10 ms: docs/adr/0046); linux_cgroup needs sha256 only to name a
    leaf (create, the group hooks), and hashlib's OpenSSL load is ~1 ms; inspect measures the
    Home's disk without shutil (bz2, lzma) (issue 26)."""
    sid = cli.create("bash", "--norc", "-i")["sessionId"]
    modules = _modules_after([a.format(id=sid) for a in args], str(cli.home))
    assert "agent_tty.platform.manager" in modules  # it did judge the host
    assert any(m.startswith("agent_tty_plugins.") for m in modules)  # through the plugin itself
    editable = any(module.startswith("__editable__") for module in modules)
    for name in ("hashlib", "_hashlib", "pluggy", "shutil", "bz2", "lzma", *SLOW_STDLIB):
        if not (editable and name == "importlib"):
            assert name not in modules and not any(m.startswith(name + ".") for m in modules), (args, name)
