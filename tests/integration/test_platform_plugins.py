"""Third-party plugins through the entry point, pinning, and doctor's report."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from tests.conftest import Cli, default_mechanism

pytestmark = pytest.mark.integration


def _third_party(tmp_path: Path, usable: bool) -> dict[str, str]:
    """A distribution that registers `fakeplat` in the agent_tty.platform group."""
    site = tmp_path / "site"
    (site / "fakeplat-1.0.dist-info").mkdir(parents=True)
    (site / "fakeplat-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplat\nVersion: 1.0\n")
    (site / "fakeplat-1.0.dist-info" / "entry_points.txt").write_text("[agent_tty.platform]\nfakeplat = fakeplat\n")
    (site / "fakeplat.py").write_text(
        textwrap.dedent(
            f"""
            from agent_tty.platform import hookimpl
            from agent_tty.platform.types import ProbeResult

            @hookimpl
            def agent_tty_probe():
                return ProbeResult("fakeplat", {usable!r}, 99 if {usable!r} else 1, "needs the fake kernel module")
            """
        )
    )
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")]))
    return {"PYTHONPATH": path}


def test_doctor_lists_builtin_and_external_plugins(cli: Cli, tmp_path: Path) -> None:
    env = _third_party(tmp_path, usable=False)
    report = cli.run("doctor", env=env).result
    names = {p["name"]: p for p in report["plugins"]}
    assert names["fakeplat"]["usable"] is False
    assert names["fakeplat"]["notChosenBecause"] == "needs the fake kernel module"
    assert report["mechanism"] == default_mechanism()
    assert report["pty"]["ok"] is True
    # Autoload off: only the built-ins.
    off = cli.run("doctor", env={**env, "AGENT_TTY_DISABLE_PLUGIN_AUTOLOAD": "1"}).result
    assert sorted(p["name"] for p in off["plugins"]) == ["linux_autogroup", "linux_cgroup"]


def test_pinned_plugin_that_cannot_work_is_an_error_not_a_fallback(cli: Cli, tmp_path: Path) -> None:
    env = {**_third_party(tmp_path, usable=False), "AGENT_TTY_MECHANISM": "fakeplat"}
    done = cli.run("create", "--", "true", env=env)
    assert done.code == 1
    assert done.error["code"] == "PLATFORM_UNAVAILABLE"
    assert "needs the fake kernel module" in done.error["message"]
    assert "AGENT_TTY_MECHANISM" in done.error["message"]
    assert not (cli.home / "sessions").exists() or not os.listdir(cli.home / "sessions")


def test_pin_in_the_home_config(cli: Cli) -> None:
    cli.home.mkdir(parents=True)
    (cli.home / "config.json").write_text('{"mechanism": "nosuchplugin"}')
    done = cli.run("create", "--", "true")
    assert done.code == 1 and "nosuchplugin" in done.error["message"] and "config.json" in done.error["message"]
    (cli.home / "config.json").write_text('{"mechanism": "linux_autogroup"}')
    created = cli.create("true")
    assert created["mechanism"] == "linux_autogroup"


def test_session_of_an_uninstalled_mechanism_proves_nothing(cli: Cli) -> None:
    created = cli.create("sleep", "300")
    sid = created["sessionId"]
    folder = cli.folder(sid)
    text = (folder / "program.json").read_text().replace(created["mechanism"], "gone_plugin")
    (folder / "program.json").write_text(text)
    # The host still holds the real record in memory: a plain destroy works.
    assert cli.run("destroy", sid).result["status"] == "destroyed"
