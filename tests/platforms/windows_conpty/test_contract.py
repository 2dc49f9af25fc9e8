"""The contract kit against windows_conpty: its shape as it is on this system, and its behaviour
on real Linux processes through LinuxWin32 (jobs as frozen-and-counted process groups). The kit
proves the plugin's logic keeps every promise given a layer with Windows' semantics; it does not
prove that win32.py has them (test_real_windows.py, on a Windows runner, does that)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import agent_tty_plugins.windows_conpty as plugin
from agent_tty.platform.contract import check_plugin
from agent_tty.testing import check_plugin_behaviour
from agent_tty.testing.behaviour import WHEN_USABLE
from tests.platforms.windows_conpty.fake_win32 import LinuxWin32


def test_shape_here() -> None:
    """check_plugin with no layer installed: off Windows the probe says why, on Windows it is usable."""
    probe = check_plugin(plugin, mechanism=plugin.MECHANISM)
    if sys.platform == "win32":
        assert probe.usable, probe.reason
    else:
        assert (probe.usable, probe.reason) == (False, "not Windows")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LinuxWin32 reads /proc")
def test_behaviour_on_linux_processes(linux_win: LinuxWin32, tmp_path: Path) -> None:
    # LinuxWin32 is installed in this process only: a program the kit spawns would load the
    # plugin without it, so runs_inside is not asked there.
    report = check_plugin_behaviour(plugin, plugin.MECHANISM, workdir=tmp_path, inside_program=False)
    assert list(report.skipped) == ["check_runs_inside_the_program"]
    assert report.passed == [
        "check_no_proof_no_signal",
        *(check.__name__ for check in WHEN_USABLE if check.__name__ != "check_runs_inside_the_program"),
    ]
    assert linux_win.jobs == {}  # every job the kit's programs had was let go
