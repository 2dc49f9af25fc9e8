"""doctor names the screen backend new sessions get, and says when it is the slow fallback or
does not load (a pyghostty wheel installed on a system it cannot run on)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.conftest import Cli

pytestmark = pytest.mark.integration


def test_doctor_names_the_installed_backend(cli: Cli) -> None:
    screen = cli.run("doctor").result["screen"]
    installed = "ghostty" if importlib.util.find_spec("pyghostty") is not None else "pyte"
    assert screen["backend"] == installed and screen["forcedBy"] is None and screen["error"] is None
    assert (screen["note"] is None) == (installed == "ghostty")


def test_on_pyte_doctor_says_how_to_get_the_fast_engine(cli: Cli) -> None:
    done = cli.run("doctor", env={"AGENT_TTY_SCREEN": "pyte"})
    screen = done.result["screen"]
    assert screen["backend"] == "pyte" and screen["forcedBy"] == "AGENT_TTY_SCREEN"
    assert "agent-tty[fast]" in screen["note"] and "slower" in screen["note"]
    human = cli.run("doctor", json_out=False, env={"AGENT_TTY_SCREEN": "pyte"}).stdout
    assert "screen     pyte (forced by AGENT_TTY_SCREEN)" in human and "agent-tty[fast]" in human


def test_a_pyghostty_that_does_not_load_is_an_error(cli: Cli, tmp_path: Path) -> None:
    # First on the path: a pyghostty whose native library is missing, as a wheel for another
    # libc would fail.
    broken = tmp_path / "site" / "pyghostty"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('libghostty-vt.so: cannot open shared object file')\n")
    done = cli.run("doctor", env={"PYTHONPATH": str(tmp_path / "site"), "AGENT_TTY_SCREEN": "ghostty"})
    assert done.code == 1
    screen = done.doc["result"]["screen"]
    assert screen["backend"] == "ghostty"
    assert "pyghostty does not load" in screen["error"] and "libghostty-vt.so" in screen["error"]


def test_doctor_names_the_screenshot_fonts(cli: Cli) -> None:
    done = cli.run("doctor")
    fonts = done.result["fonts"]
    assert fonts["primary"]["installed"] is True and fonts["primary"]["font"] == "JetBrains Mono"
    assert set(fonts) == {"primary", "text", "symbols", "emoji", "cjk"}
    for role in ("text", "symbols", "emoji"):  # shipped inside agent-tty (agent_tty/fonts/)
        assert fonts[role] == {**fonts[role], "package": "agent_tty.fonts", "installed": True}, role
    expected = importlib.util.find_spec("noto_cjk_sans_jp_regular") is not None
    assert fonts["cjk"]["installed"] is expected
    human = cli.run("doctor", json_out=False).stdout
    assert "fonts      JetBrains Mono; fallbacks: text " in human
