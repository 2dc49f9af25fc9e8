"""Commands declared with typer, parsed by click: the same values, errors and exit codes under
every typer from the oldest we support to the newest (.ci/run runs this file under both)."""

from __future__ import annotations

import importlib
import io
import json
import subprocess
import sys
from contextlib import redirect_stdout
from typing import Annotated, Any

import click
import pytest
import typer

from agent_tty.cli.main import COMMANDS
from agent_tty.cli.parse import DeclarationError, build

# A command module per name; `platform` reuses doctor's.
MODULES = sorted({info.module for info in COMMANDS.values()})


def _parse(name: str, args: list[str]) -> dict[str, Any]:
    """What the command function would be called with for `args`."""
    seen: dict[str, Any] = {}

    def spy(**values: Any) -> int:
        seen.update(values)
        return 0

    module = importlib.import_module(COMMANDS[name].module)
    spy.__signature__ = __import__("inspect").signature(module.command)  # type: ignore[attr-defined]
    command = build(name, "summary", spy, resolve_ids=False)  # parsing alone: no Home to resolve ids in
    assert command.main(args=args, prog_name=name, standalone_mode=False) == 0
    return seen


@pytest.mark.parametrize("module_name", MODULES)
def test_every_command_builds(module_name: str) -> None:
    module = importlib.import_module(module_name)
    command = build("x", "summary", module.command)
    assert isinstance(command, click.Command)
    names = [p.name for p in command.params]
    assert names == list(__import__("inspect").signature(module.command).parameters)


def test_values_reach_the_command_as_declared() -> None:
    values = _parse("create", ["--name", "n", "--cols", "100", "--env", "A=1", "--env", "B=2", "--", "bash", "--norc"])
    assert values == {
        "program": ["bash", "--norc"],
        "name": "n",
        "cols": 100,
        "rows": 24,
        "cwd": None,
        "env": ["A=1", "B=2"],
        "term": "xterm-256color",
        "idle_timeout": None,
    }
    assert _parse("destroy", ["abc", "-f"]) == {"session_id": "abc", "force": True}
    assert _parse("list", []) == {"all_": False}
    assert _parse("send-keys", ["abc", "C-c", "Enter"]) == {"session_id": "abc", "keys": ["C-c", "Enter"]}
    assert _parse("paste", ["abc"]) == {"session_id": "abc", "text": None, "file": None}
    assert _parse("wait", ["abc", "--idle-ms", "5", "--exit"])["idle_ms"] == "5"


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("wait", [], "Missing argument 'ID'."),
        ("resize", ["abc", "--rows", "3"], "Missing option '--cols'."),
        ("resize", ["abc", "--cols", "x", "--rows", "3"], "'x' is not a valid integer"),
        ("destroy", ["abc", "--bogus"], "No such option"),
        ("send-keys", ["abc"], "Missing argument 'KEY...'."),
        ("inspect", ["a", "b"], "Got unexpected extra argument"),
    ],
)
def test_usage_errors_are_exit_2_envelopes(name: str, args: list[str], message: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    done = subprocess.run(
        [sys.executable, "-m", "agent_tty.cli.main", "--json", name, *args],
        capture_output=True,
        text=True,
        env={"AGENT_TTY_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2, done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["ok"] is False and envelope["error"]["code"] == "USAGE"
    assert message in envelope["error"]["message"]
    assert "Traceback" not in done.stderr


def test_help_is_exit_0_and_lists_argument_help() -> None:
    from agent_tty.cli.main import main

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["create", "--help"]) == 0
    assert "Arguments:" in out.getvalue() and "-- PROGRAM [ARGS]..." in out.getvalue()
    assert "--idle-timeout" in out.getvalue()


def test_an_unsupported_declaration_is_refused() -> None:
    def command(ratio: Annotated[float, typer.Option("--ratio")] = 1.0) -> int:
        return 0

    with pytest.raises(DeclarationError, match="ratio"):
        build("x", "summary", command)


def test_a_default_style_declaration_is_refused() -> None:
    """The old form, `= typer.Option(...)` as the default, would import typer with the module."""

    def command(name: str = typer.Option("x", "--name")) -> int:
        return 0

    with pytest.raises(DeclarationError, match="name"):
        build("x", "summary", command)
