"""The example third-party plugin (examples/agent-tty-plugin-example) keeps the behavioural
contract, and, installed as a distribution, runs a session through the real CLI when pinned."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from agent_tty.testing import check_plugin_behaviour
from tests.conftest import REPO, Cli, group_members, pid_alive, wait_until

EXAMPLE = REPO / "examples" / "agent-tty-plugin-example"
MECHANISM = "example_pgid"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the example plugin works on Linux only")


def _example_module():  # type: ignore[no-untyped-def]
    if str(EXAMPLE) not in sys.path:
        sys.path.insert(0, str(EXAMPLE))
    import agent_tty_example

    return agent_tty_example


def test_the_example_keeps_the_behavioural_contract(tmp_path: Path) -> None:
    example = _example_module()
    report = check_plugin_behaviour(example.plugin, MECHANISM, workdir=tmp_path)
    assert report.probe.usable, report.probe.reason
    assert report.skipped == {}
    assert report.probe.rank < 10, "the example must rank below every built-in: chosen only when pinned"


def _install(tmp_path: Path) -> tuple[Path, str]:
    """The example installed into a folder for PYTHONPATH, and how: pip --target without build
    isolation (offline), else, where pip cannot build it (no `wheel` for this setuptools, say), a
    dist-info written by hand from the example's own pyproject.toml."""
    source = tmp_path / "src"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(site), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    if done.returncode == 0:
        return site, "pip install --no-deps --no-build-isolation --target"
    why = next((line.strip() for line in done.stderr.splitlines() if "error:" in line and "subprocess" not in line), done.stderr.strip()[-200:])
    shutil.rmtree(site, ignore_errors=True)
    project = tomllib.loads((source / "pyproject.toml").read_text())["project"]
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    points = project["entry-points"]["agent_tty.platform"]
    (info / "entry_points.txt").write_text("[agent_tty.platform]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()))
    shutil.copytree(source / "agent_tty_example", site / "agent_tty_example")
    return site, f"a hand-written dist-info (pip failed: {why})"


@pytest.mark.integration
def test_the_cli_runs_a_session_on_the_installed_example(monkeypatch: pytest.MonkeyPatch, cli: Cli, tmp_path: Path) -> None:
    site, how = _install(tmp_path)
    print(f"example installed by {how}")
    # Set for the whole test, the cli fixture's final destroy and gc too (monkeypatch is undone after them).
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")])))
    cli.pin = MECHANISM

    doctor = cli.run("doctor").result
    plugins = {p["name"]: p for p in doctor["plugins"]}
    assert plugins[MECHANISM]["usable"] is True, plugins.get(MECHANISM)
    assert doctor["mechanism"] == MECHANISM

    created = cli.create("sh", "-c", 'trap "" HUP; sleep 300 & wait')
    sid, pid = created["sessionId"], created["childPid"]
    assert created["mechanism"] == MECHANISM
    assert cli.program(sid)["mechanism"] == MECHANISM
    wait_until(lambda: len(group_members(pid)) >= 2, what="the shell's sleep to start")

    inspected = cli.run("inspect", sid).result
    assert inspected["status"] == "running"
    assert inspected["derived"]["host"] == "alive"

    destroyed = cli.run("destroy", sid).result
    assert destroyed["status"] == "destroyed"
    assert not pid_alive(pid)
    assert group_members(pid) == [], "the program's group outlived destroy"
    wait_until(lambda: not pid_alive(created["hostPid"]), what="the host to end")
    assert cli.run("gc").result["removedSessions"] == [sid]
