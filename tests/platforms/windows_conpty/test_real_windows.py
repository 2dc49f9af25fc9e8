"""windows_conpty on a real Windows: win32.py's jobs, ConPTY and process handles, no fake.

Skipped everywhere else. The Windows job of .github/workflows/platforms.yml runs it; until that
job has run on a push, none of this has run (docs/USAGE.md says so).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "win32", reason="needs a real Windows (the CI's windows-latest job)")

SLEEPER = (sys.executable, "-c", "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)']); time.sleep(300)")


# Generous: CI runs Wine beside the model check and the tests on 2 cores, where starting two
# Windows CPythons one after the other took over 10 s. A wait ends as soon as its check holds.
def _wait(check, timeout: float = 60.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not (value := check()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


def test_probe_is_usable() -> None:
    import agent_tty_plugins.windows_conpty as plugin

    probe = plugin.agent_tty_probe()
    assert probe.usable, probe.reason


def test_the_job_holds_the_program_and_its_child_and_dies_whole(tmp_path: Path) -> None:
    import agent_tty_plugins.windows_conpty as plugin
    from agent_tty.platform.types import GroupRef, GroupVerdict, SpawnRequest, Stop
    from agent_tty_plugins.windows_conpty import layer

    folder = tmp_path / "s1"
    folder.mkdir()
    request = SpawnRequest(plugin.MECHANISM, SLEEPER, dict(os.environ), str(tmp_path), 80, 24, "s1", str(tmp_path))
    handle = plugin.agent_tty_spawn(request=request)
    try:
        proof = plugin.agent_tty_capture_program(mechanism=plugin.MECHANISM, pid=handle.pid, host_pid=os.getpid()).proof
        group = GroupRef(plugin.MECHANISM, handle.pid, proof, folder, None, "s1")
        win = layer.current()
        job = win.open_job(proof["job"])
        assert job is not None
        try:
            # the trampoline, python, and its child: all in the job
            assert _wait(lambda: win.job_active(job) >= 3), win.job_active(job)
        finally:
            win.close_handle(job)
        assert plugin.agent_tty_judge_group(group=group) is GroupVerdict.OWNED
        assert plugin.agent_tty_kill_group(group=group, signal=Stop.KILL) is GroupVerdict.OWNED
        assert _wait(lambda: plugin.agent_tty_judge_group(group=group) is GroupVerdict.GONE)
        assert _wait(lambda: handle.poll_exit() is not None)
        assert plugin.agent_tty_release_group(group=group) is True
        # A handle on a member, even an ended one, keeps its job (and so the name) alive: Wine
        # shows it, and Windows frees a process's job only with the process object. Once the
        # ConPTY's handle on the trampoline is dropped, the last reference is gone.
        handle.close()

        def name_gone() -> bool:
            opened = win.open_job(proof["job"])
            if opened is not None:
                win.close_handle(opened)  # our own look must not keep it
            return opened is None

        assert _wait(name_gone)
    finally:
        handle.close()


def test_output_comes_through_the_conpty(tmp_path: Path) -> None:
    import selectors

    import agent_tty_plugins.windows_conpty as plugin
    from agent_tty.platform.types import SpawnRequest

    request = SpawnRequest(
        plugin.MECHANISM, (sys.executable, "-c", "print('hello-conpty')"), dict(os.environ), None, 80, 24, "s2", str(tmp_path)
    )
    handle = plugin.agent_tty_spawn(request=request)
    seen = b""
    try:
        selector = selectors.DefaultSelector()
        selector.register(handle.fd, selectors.EVENT_READ)
        deadline = time.monotonic() + 60
        while b"hello-conpty" not in seen and time.monotonic() < deadline:
            if selector.select(0.2):
                data = handle.read(4096)
                if data is None:
                    break
                seen += data
        assert b"hello-conpty" in seen, seen
        assert _wait(lambda: handle.poll_exit() is not None)
    finally:
        handle.close()


def test_host_identity_of_a_real_process() -> None:
    import agent_tty_plugins.windows_conpty as plugin
    from agent_tty.platform.types import HostVerdict

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        me = plugin.agent_tty_capture_host(mechanism=plugin.MECHANISM, pid=os.getpid())
        assert plugin.agent_tty_judge_host(mechanism=plugin.MECHANISM, pid=os.getpid(), identity=me) is HostVerdict.ALIVE
        # my identity on another live process: not ALIVE, and no kill
        forged = plugin.agent_tty_kill_host(mechanism=plugin.MECHANISM, pid=other.pid, identity=me)
        assert forged is not HostVerdict.ALIVE and other.poll() is None
        identity = plugin.agent_tty_capture_host(mechanism=plugin.MECHANISM, pid=other.pid)
        assert plugin.agent_tty_kill_host(mechanism=plugin.MECHANISM, pid=other.pid, identity=identity) is HostVerdict.ALIVE
        assert other.wait(10) == 137
        assert plugin.agent_tty_judge_host(mechanism=plugin.MECHANISM, pid=other.pid, identity=identity) is HostVerdict.DEAD
    finally:
        other.kill()
