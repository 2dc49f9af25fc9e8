"""The hot path's parser (agent_tty/cli/fastparse.py) against click's, on every command.

fastparse may give way (None) on anything; when it answers, its values must be exactly the
ones click would pass the command. And it must answer the ordinary calls, or the hot path is
click again without anyone noticing.
"""

from __future__ import annotations

import importlib
import inspect
import random
from pathlib import Path
from typing import Any

import click
import pytest

from agent_tty.cli import argtable
from agent_tty.cli.fastparse import parse
from agent_tty.cli.main import COMMANDS
from agent_tty.cli.parse import build, table_source

TABLE = argtable.TABLE


def _click_values(name: str, args: list[str]) -> dict[str, Any] | None:
    """What click passes the command for `args`, or None when it refuses them (or prints help)."""
    seen: dict[str, Any] = {}

    def spy(**values: Any) -> int:
        seen.update(values)
        return 0

    spy.__signature__ = inspect.signature(importlib.import_module(COMMANDS[name].module).command)  # type: ignore[attr-defined]
    command = build(name, "summary", spy, resolve_ids=False)
    try:
        command.main(args=list(args), prog_name=name, standalone_mode=False)
    except (click.exceptions.ClickException, click.exceptions.Exit):
        return None
    return seen or (None if command.params else {})


def test_the_table_is_what_the_declarations_say() -> None:
    assert Path(argtable.__file__).read_text() == table_source(), "run `python -m agent_tty.cli.parse` and commit agent_tty/cli/argtable.py"


def test_every_command_has_a_row() -> None:
    assert set(TABLE) == set(COMMANDS)


ORDINARY = [
    ("snapshot", ["abc"]),
    ("snapshot", ["abc", "--format", "structured", "--scrollback"]),
    ("snapshot", ["--format=structured", "abc"]),
    ("send-keys", ["abc", "C-c", "Enter"]),
    ("send-keys", ["abc", "--", "-x"]),
    ("type", ["abc", "hello world"]),
    ("type", ["abc", ""]),
    ("type", ["abc", "--", "--not-an-option"]),
    ("run", ["abc", "make test", "--timeout", "5m"]),
    ("run", ["abc", "true", "--no-wait"]),
    ("wait", ["abc", "--text", "passed", "--timeout", "60s", "--output", "--after-seq", "12"]),
    ("wait", ["abc", "--screen-stable-ms", "500"]),
    ("wait", ["abc", "--exit"]),
    ("list", []),
    ("list", ["-a"]),
    ("list", ["--all"]),
    ("inspect", ["abc"]),
    ("destroy", ["abc", "-f"]),
    ("gc", ["--dry-run", "--older-than", "1h"]),
    ("create", ["--name", "n", "--cols", "100", "--env", "A=1", "--env", "B=2", "--", "bash", "--norc"]),
    ("create", ["--", "bash"]),
    ("resize", ["abc", "--cols", "120", "--rows", "40"]),
    ("resize", ["abc", "--cols", "+7", "--rows", " 40 "]),
    ("signal", ["abc", "INT"]),
    ("mark", ["abc", "before-deploy"]),
    ("record", ["export", "abc", "--out", "s.cast"]),
    ("paste", ["abc", "--file", "snippet.py"]),
    ("screenshot", ["abc", "--out", "screen.png"]),
    ("version", []),
    ("doctor", []),
]


@pytest.mark.parametrize(("name", "args"), ORDINARY)
def test_ordinary_calls_take_the_fast_path_with_clicks_values(name: str, args: list[str]) -> None:
    fast = parse(TABLE[name], args)
    assert fast is not None, "the fast path gave way on an ordinary call"
    assert fast == _click_values(name, args)


GIVE_WAY = [
    ("snapshot", ["abc", "--help"]),
    ("snapshot", ["-h"]),
    ("snapshot", []),
    ("snapshot", ["abc", "extra"]),
    ("snapshot", ["abc", "--form", "text"]),  # click does not take abbreviations either
    ("snapshot", ["abc", "--scrollback=yes"]),
    ("snapshot", ["abc", "--format"]),
    ("wait", ["abc", "--text", "-5"]),
    ("resize", ["abc", "--cols", "x", "--rows", "3"]),
    ("resize", ["abc", "--rows", "3"]),
    ("send-keys", ["abc"]),
    ("list", ["-af"]),
    ("type", ["abc", "-5"]),
    ("create", []),
]


@pytest.mark.parametrize(("name", "args"), GIVE_WAY)
def test_what_needs_clicks_words_goes_to_click(name: str, args: list[str]) -> None:
    assert parse(TABLE[name], args) is None


def _tokens(name: str) -> list[str]:
    arguments, options = TABLE[name]
    words = ["abc", "x", "", "-", "--", "-5", "7", " 8 ", "1_0", "a=b", "--nope", "-h", "--help", "-q"]
    for names, _dest, _kind, _many, _required, _default in options:
        words.extend(names)
        words.extend(f"{option}=v" for option in names if option.startswith("--"))
        words.extend(f"{option}=3" for option in names if option.startswith("--"))
    return words


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_random_command_lines_agree_with_click(name: str) -> None:
    pick = random.Random(f"fastparse-{name}")  # the same lines on every run
    tokens = _tokens(name)
    answered = 0
    for _ in range(400):
        args = [pick.choice(tokens) for _ in range(pick.randint(0, 6))]
        fast = parse(TABLE[name], args)
        if fast is None:
            continue
        answered += 1
        assert fast == _click_values(name, args), args
    assert answered > 0
