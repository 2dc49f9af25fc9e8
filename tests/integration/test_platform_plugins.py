"""Third-party plugins through the entry point, pinning, and doctor's report."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from tests.conftest import Cli, default_mechanism

pytestmark = pytest.mark.integration


def _distribution(tmp_path: Path, name: str, source: str) -> dict[str, str]:
    """An installed distribution (a dist-info on PYTHONPATH) that registers module `name` in
    the agent_tty.platform group; the environment that makes the CLI find it."""
    site = tmp_path / "site"
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[agent_tty.platform]\n{name} = {name}\n")
    (site / f"{name}.py").write_text(textwrap.dedent(source))
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")]))
    return {"PYTHONPATH": path}


def _third_party(tmp_path: Path, usable: bool) -> dict[str, str]:
    """A distribution that registers `fakeplat` in the agent_tty.platform group."""
    return _distribution(
        tmp_path,
        "fakeplat",
        f"""
        from agent_tty.platform import hookimpl
        from agent_tty.platform.types import ProbeResult

        @hookimpl
        def agent_tty_probe():
            return ProbeResult("fakeplat", {usable!r}, 99 if {usable!r} else 1, "needs the fake kernel module")
        """,
    )


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
    off_names = {p["name"] for p in off["plugins"]}
    assert "fakeplat" not in off_names and {"linux_autogroup", "linux_cgroup"} <= off_names


def test_pinned_plugin_that_cannot_work_is_an_error_not_a_fallback(cli: Cli, tmp_path: Path) -> None:
    env = {**_third_party(tmp_path, usable=False), "AGENT_TTY_MECHANISM": "fakeplat"}
    done = cli.run("create", "--", "true", env=env)
    assert done.code == 1
    assert done.error["code"] == "PLATFORM_UNAVAILABLE"
    assert "needs the fake kernel module" in done.error["message"]
    assert "AGENT_TTY_MECHANISM" in done.error["message"]
    assert not (cli.home / "sessions").exists() or not os.listdir(cli.home / "sessions")


def test_pin_in_the_home_config(cli: Cli) -> None:
    cli.pin = None  # the Home's config is the pin under test: no AGENT_TTY_MECHANISM over it
    cli.home.mkdir(parents=True)
    (cli.home / "config.json").write_text('{"mechanism": "nosuchplugin"}')
    done = cli.run("create", "--", "true")
    assert done.code == 1 and "nosuchplugin" in done.error["message"] and "config.json" in done.error["message"]
    (cli.home / "config.json").write_text('{"mechanism": "linux_autogroup"}')
    created = cli.create("true")
    assert created["mechanism"] == "linux_autogroup"
    # doctor gives the pin, not the ranking, as why the others were not chosen.
    for plugin in cli.run("doctor").result["plugins"]:
        if plugin["usable"] and plugin["name"] != "linux_autogroup":
            assert plugin["notChosenBecause"].startswith("linux_autogroup is pinned by ") and plugin["notChosenBecause"].endswith("config.json"), plugin


def test_session_of_an_uninstalled_mechanism_proves_nothing(cli: Cli) -> None:
    created = cli.create("sleep", "300")
    sid = created["sessionId"]
    folder = cli.folder(sid)
    text = (folder / "program.json").read_text().replace(created["mechanism"], "gone_plugin")
    (folder / "program.json").write_text(text)
    # The host still holds the real record in memory: a plain destroy works.
    assert cli.run("destroy", sid).result["status"] == "destroyed"


# ---------------------------------------------------------------- a broken plugin stays alone

# Every hook raises, whatever mechanism the call names; the probe too unless PROBE_OK.
BROKEN = """
from agent_tty.platform import hookimpl

PROBE_OK = {probe_ok}

def _boom(*args, **kwargs):
    raise RuntimeError("broken on purpose")

@hookimpl
def agent_tty_probe():
    if PROBE_OK:
        from agent_tty.platform.types import ProbeResult
        return ProbeResult("broken", False, 1, "never usable")
    _boom()

@hookimpl
def agent_tty_judge_group(group): _boom()
@hookimpl
def agent_tty_kill_group(group, signal): _boom()
@hookimpl
def agent_tty_group_alive(group): _boom()
@hookimpl
def agent_tty_release_group(group): _boom()
@hookimpl
def agent_tty_runs_inside(mechanism, program_pid, host_identity): _boom()
@hookimpl
def agent_tty_capture_host(mechanism, pid): _boom()
@hookimpl
def agent_tty_judge_host(mechanism, pid, identity): _boom()
@hookimpl
def agent_tty_kill_host(mechanism, pid, identity): _boom()
@hookimpl
def agent_tty_capture_program(mechanism, pid, host_pid): _boom()
@hookimpl
def agent_tty_spawn(request): _boom()
@hookimpl
def agent_tty_sweep(home, session_ids): _boom()
"""


def test_a_plugin_whose_probe_raises_is_reported_and_others_still_work(cli: Cli, tmp_path: Path) -> None:
    env = _distribution(tmp_path, "broken", BROKEN.format(probe_ok=False))
    report = cli.run("doctor", env=env)
    assert report.code == 0, report.stdout
    broken = {p["name"]: p for p in report.result["plugins"]}["broken"]
    assert broken["usable"] is False
    assert broken["reason"] == "its probe raised RuntimeError: broken on purpose"
    human = cli.run("doctor", json_out=False, env=env)
    assert "broken (rank 0): its probe raised RuntimeError" in human.stdout
    created = cli.run("create", "--", "sleep", "300", env=env)
    assert created.code == 0 and created.result["mechanism"] == default_mechanism(), created.stdout
    pinned = cli.run("create", "--", "true", env={**env, "AGENT_TTY_MECHANISM": "broken"})
    assert pinned.code == 1 and pinned.error["code"] == "PLATFORM_UNAVAILABLE"
    assert "its probe raised RuntimeError: broken on purpose" in pinned.error["message"]
    assert cli.run("destroy", created.result["sessionId"], env=env).code == 0


def test_hooks_of_a_broken_plugin_never_run_for_other_sessions(cli: Cli, tmp_path: Path) -> None:
    """Its hooks raise for every call, whatever mechanism it names: only the session's own
    plugin is asked, so list, inspect, destroy and gc work; its sweep's failure is reported
    and the other sweeps still run."""
    env = _distribution(tmp_path, "broken", BROKEN.format(probe_ok=True))
    created = cli.run("create", "--", "sleep", "300", env=env)
    assert created.code == 0, created.stdout
    sid = created.result["sessionId"]
    assert cli.run("inspect", sid, env=env).result["status"] == "running"
    assert [s["sessionId"] for s in cli.run("list", env=env).result["sessions"]] == [sid]
    assert cli.run("destroy", sid, "--force", env=env).result["status"] == "destroyed"
    collected = cli.run("gc", env=env)
    assert collected.code == 0, collected.stdout
    assert collected.result["removedSessions"] == [sid]
    assert collected.result["sweepErrors"] == {"broken": "RuntimeError: broken on purpose"}


def test_a_pinned_plugin_that_fails_to_load_names_its_error(cli: Cli, tmp_path: Path) -> None:
    env = _distribution(tmp_path, "noimport", "raise ImportError('needs libfoo')")
    done = cli.run("create", "--", "true", env={**env, "AGENT_TTY_MECHANISM": "noimport"})
    assert done.code == 1 and done.error["code"] == "PLATFORM_UNAVAILABLE"
    assert "failed to load: ImportError: needs libfoo" in done.error["message"]
    report = cli.run("doctor", env=env).result
    assert {p["name"]: p for p in report["plugins"]}["noimport"]["notChosenBecause"].startswith("failed to load")


def test_gc_sweeps_with_every_installed_plugin(cli: Cli, tmp_path: Path) -> None:
    """A plugin no session uses still gets its sweep: what a crash left of its own is freed."""
    marker = tmp_path / "swept.txt"
    env = _distribution(
        tmp_path,
        "sweeper",
        f"""
        from agent_tty.platform import hookimpl
        from agent_tty.platform.types import ProbeResult

        @hookimpl
        def agent_tty_probe():
            return ProbeResult("sweeper", False, 1, "sweeps only")

        @hookimpl
        def agent_tty_sweep(home, session_ids):
            with open({str(marker)!r}, "a") as out:
                out.write(home + " " + ",".join(session_ids) + "\\n")
            return ["sweeper-leftover"]
        """,
    )
    created = cli.create("sleep", "300")
    done = cli.run("gc", env=env)
    assert done.code == 0 and "sweepErrors" not in done.result, done.stdout
    assert marker.read_text().split() == [str(cli.home.resolve()), created["sessionId"]]
    cli.run("destroy", created["sessionId"])
