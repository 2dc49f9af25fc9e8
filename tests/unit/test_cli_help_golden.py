"""Every command's --help (text and --json) as it was before the hot path stopped loading typer
and click (docs/adr/0027): help is still click's, built from the same typer declarations.

tests/unit/golden/cli_help.json was written by the tree before that change; click 8.1.0 (the
oldest in scripts/test-typer-range) and 8.5.1 lay it out alike. A change to a
command's help on purpose rewrites it: `python tests/unit/test_cli_help_golden.py --write`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

GOLDEN = Path(__file__).with_name("golden") / "cli_help.json"


def _help(args: list[str]) -> dict[str, object]:
    env = {"PATH": "/usr/bin:/bin", "COLUMNS": "80", "AGENT_TTY_HOME": "/nonexistent/agent-tty-golden", "LANG": "C.UTF-8"}
    done = subprocess.run([sys.executable, "-m", "agent_tty", *args], capture_output=True, text=True, env=env, cwd="/")
    return {"exit": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def _all_help() -> dict[str, dict[str, object]]:
    from agent_tty.cli.main import COMMANDS

    runs = [["--help"], *[[name, "--help"] for name in COMMANDS], *[["--json", name, "--help"] for name in COMMANDS]]
    return {" ".join(args): _help(args) for args in runs}


def test_every_help_is_unchanged() -> None:
    golden = json.loads(GOLDEN.read_text())
    now = _all_help()
    assert set(now) == set(golden)
    changed = [key for key in golden if now[key] != golden[key]]
    assert not changed, f"help changed for {changed[:5]}: see the module docstring"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        GOLDEN.write_text(json.dumps(_all_help(), indent=1, sort_keys=True) + "\n")
