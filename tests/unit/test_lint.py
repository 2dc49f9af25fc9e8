"""ruff, at the version the test extra pins, finds nothing in agent_tty/ and plugins/ (its
default rules, less the ones pyproject.toml's [tool.ruff.lint] says why it leaves out)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing() -> None:
    checked = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "agent_tty", "plugins"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
