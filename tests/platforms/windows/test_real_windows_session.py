"""A whole session on Windows, through the CLI as an agent drives it: create, wait, type, keys,
snapshot, list, inspect, destroy, gc, with a real detached host, ConPTY, Job Object and loopback
transport. Skipped everywhere but win32: scripts/test-wine runs it under Wine, the platforms
workflow on a Windows runner (docs/adr/0023)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "win32", reason="a real Windows session (scripts/test-wine, the Windows runner)")


def cli(home: Path, *args: str, timeout: float = 60) -> tuple[int, dict[str, Any]]:
    """One CLI command with --json. Its output goes to a file, not a pipe: a pipe that a host
    still held would keep the read open (Wine hands a child every inheritable handle)."""
    with tempfile.TemporaryFile() as out:
        done = subprocess.run(
            [sys.executable, "-m", "agent_tty", "--home", str(home), "--json", *args],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, timeout=timeout,
        )
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    try:
        return done.returncode, json.loads(text)
    except ValueError:
        raise AssertionError(f"exit {done.returncode}, not JSON: {text!r}") from None


def test_a_session_runs_is_driven_and_is_destroyed_whole(tmp_path: Path) -> None:
    import psutil

    home = tmp_path / "home"
    code, doctor = cli(home, "doctor")
    assert doctor["result"]["mechanism"] == "windows_conpty", doctor
    assert doctor["result"]["pty"]["ok"] is True and doctor["result"]["transport"] == "loopback", doctor

    code, created = cli(home, "create", "--name", "repl", "--", sys.executable, "-i", "-q")
    assert code == 0 and created["ok"], created
    session = created["result"]["sessionId"]
    destroyed = False
    try:
        code, seen = cli(home, "wait", "repl", "--text", ">>>", "--timeout", "30")
        assert code == 0, seen
        assert cli(home, "type", "repl", "print(6 * 7)")[0] == 0
        assert cli(home, "send-keys", "repl", "Enter")[0] == 0
        code, seen = cli(home, "wait", "repl", "--text", "42", "--timeout", "30")
        assert code == 0, seen
        code, snapshot = cli(home, "snapshot", "repl")
        assert code == 0 and "42" in "\n".join(snapshot["result"]["lines"]), snapshot

        code, listed = cli(home, "list")
        assert [entry["sessionId"] for entry in listed["result"]["sessions"]] == [session], listed
        code, inspected = cli(home, "inspect", "repl")
        assert inspected["result"]["status"] == "running", inspected
        program, host = inspected["result"]["childPid"], inspected["result"]["hostPid"]
        assert psutil.pid_exists(program) and psutil.pid_exists(host)

        code, gone = cli(home, "destroy", "repl")
        destroyed = code == 0
        assert destroyed, gone
        code, inspected = cli(home, "inspect", session)
        assert inspected["result"]["status"] == "destroyed", inspected
        for pid in (program, host):  # the job ended the program; the host ends itself after its answer
            deadline = time.monotonic() + 60
            while psutil.pid_exists(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not psutil.pid_exists(pid), (pid, "program" if pid == program else "host")
        code, collected = cli(home, "gc")
        assert code == 0 and collected["result"]["removedSessions"] == [session], collected
        assert not (home / "sessions" / session).exists()
    finally:
        if not destroyed:
            cli(home, "destroy", "--force", session)
