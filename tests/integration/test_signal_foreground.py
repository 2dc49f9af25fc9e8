"""signal INT/QUIT/TSTP reach the terminal's foreground group, as a terminal sends them; other
signals the program's group. On both mechanisms the foreground group is the session's: the PTY
delivers to its own foreground group, which only a group of the program's session can be."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import Cli, pid_alive, wait_until

pytestmark = pytest.mark.integration


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _foreground_job(shell: int) -> int | None:
    """A child of the shell whose group is the terminal's foreground group (stat's tpgid)."""
    for child in _children(shell):
        try:
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == int(fields[5]) != shell:
            return child
    return None


def _bash(cli: Cli) -> dict:  # type: ignore[type-arg]
    return cli.create("bash", "--norc", "--noprofile", options=("--env", "PS1=$ "))


def test_int_interrupts_the_command_running_in_the_shell(cli: Cli) -> None:
    created = _bash(cli)
    sid, shell = created["sessionId"], created["childPid"]
    try:
        cli.run("run", sid, "sleep 100", "--no-wait")
        # bash forks the command into a job of its own: the terminal's foreground group.
        wait_until(lambda: _foreground_job(shell) is not None, what="sleep as the terminal's foreground job")
        sleeper = _foreground_job(shell)
        assert sleeper is not None
        job = os.getpgid(sleeper)
        sent = cli.run("signal", sid, "INT").result
        assert sent["delivered"] is True and sent["foreground"] is True
        assert sent["group"] == job != shell  # the job's group, not the shell's
        after = cli.run("run", sid, "echo AFTER", "--timeout", "10s")
        assert after.code == 0 and after.result["completed"] is True, after.result
        assert not pid_alive(sleeper)  # the interrupted command is gone, the shell runs on
        assert cli.run("inspect", sid).result["status"] == "running"
    finally:
        cli.run("destroy", sid)


def test_int_at_the_prompt_reaches_the_shell_and_term_the_program_group(cli: Cli) -> None:
    created = _bash(cli)
    sid, shell = created["sessionId"], created["childPid"]
    try:
        assert cli.run("run", sid, "true", "--timeout", "10s").code == 0
        at_prompt = cli.run("signal", sid, "INT").result
        assert at_prompt["foreground"] is True and at_prompt["group"] == shell
        assert cli.run("run", sid, "echo STILL", "--timeout", "10s").result["completed"] is True  # bash ignores INT at its prompt
        term = cli.run("signal", sid, "TERM").result
        assert term["foreground"] is False and term["group"] == shell and term["delivered"] is True
    finally:
        cli.run("destroy", sid)
