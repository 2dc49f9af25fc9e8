"""What a plugin author runs: the AGENT_TTY_DEBUG trace of hook calls and their verdicts, and
`python -m agent_tty.testing MECHANISM`, the kit plus the integration suite pinned to it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, Cli, pid_alive, wait_until

import pytest

pytestmark = pytest.mark.integration


def test_debug_traces_each_hook_call_and_its_verdict(cli: Cli) -> None:
    sid = cli.create("sleep", "300")["sessionId"]
    traced = cli.run("destroy", sid, env={"AGENT_TTY_DEBUG": "1"})
    assert traced.code == 0, traced.stderr
    lines = [line for line in traced.stderr.splitlines() if " hook " in line]
    mechanism = cli.manifest(sid)["mechanism"]
    # A destroy asks whether it runs inside the program, and proves the host alive (the host
    # then kills the program's group itself).
    assert any(re.search(rf"hook {mechanism}\.agent_tty_runs_inside\(mechanism='{mechanism}', program_pid=\d+, .*\) -> False$", line) for line in lines), traced.stderr
    assert any(re.search(rf"hook {mechanism}\.agent_tty_judge_host\(.*\) -> <HostVerdict\.ALIVE: 'alive'>$", line) for line in lines), traced.stderr
    assert all(line.startswith("agent-tty[") for line in lines)
    # With its host gone, the CLI proves and kills the group itself: the group hooks and their
    # verdicts are in its trace.
    orphan = cli.create("sh", "-c", "trap '' HUP; sleep 300")
    os.kill(orphan["hostPid"], signal.SIGKILL)  # ours: the host this test started
    wait_until(lambda: not pid_alive(orphan["hostPid"]), what="the host to end")
    killed = cli.run("destroy", orphan["sessionId"], env={"AGENT_TTY_DEBUG": "1"})
    assert killed.code == 0, killed.stderr
    assert re.search(
        rf"hook {mechanism}\.agent_tty_kill_group\(group=GroupRef\(mechanism='{mechanism}', pid={orphan['childPid']}, .*signal=<Stop\.KILL: 9>\) -> <GroupVerdict\.OWNED: 'owned'>$",
        killed.stderr,
        re.MULTILINE,
    ), killed.stderr
    assert re.search(rf"hook {mechanism}\.agent_tty_group_alive\(group=GroupRef\(.*\) -> False$", killed.stderr, re.MULTILINE)
    quiet = cli.run("list")
    assert " hook " not in quiet.stderr, "the trace must be off unless AGENT_TTY_DEBUG=1"


def _runner(*args: str, cwd: Path = REPO, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_TTY_")}
    return subprocess.run(
        [sys.executable, "-m", "agent_tty.testing", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout
    )


def test_the_runner_runs_the_kit_and_the_pinned_suite(tmp_path: Path) -> None:
    done = _runner(
        "macos_ps", "--suite", str(REPO / "tests" / "integration"), "--", "-q", "-k", "test_list_hides_ended_sessions_unless_all"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b1 passed\b", done.stdout), done.stdout
    assert "== behavioural kit: macos_ps" in done.stdout and "passed  check_unseen_fork_chain" in done.stdout
    assert "pinned to macos_ps" in done.stdout


def test_the_runner_says_where_the_suite_is(tmp_path: Path) -> None:
    done = _runner("macos_ps", cwd=tmp_path)
    assert done.returncode == 2 and "not in the wheel" in done.stderr and "--kit-only" in done.stderr
    unknown = _runner("no_such_mechanism", "--kit-only", cwd=tmp_path)
    assert unknown.returncode == 2 and "no installed plugin provides the mechanism 'no_such_mechanism'" in unknown.stderr
