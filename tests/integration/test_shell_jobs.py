"""Jobs of an interactive shell end with its session under linux_autogroup (issue 9, item 8).

bash with job control puts each job in a process group of its own, but the job keeps the
program's session id and autogroup: the token proves it, so destroy kills it, waits for it,
and gc keeps the session while it runs. A signal such as SIGINT still goes to the program's
group only, as a terminal's ^C would.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli, beats, wait_until

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only"),
    pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash"),
]


@pytest.fixture
def cli(cli: Cli) -> Iterator[Cli]:
    cli.pin = "linux_autogroup"
    yield cli


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[list[Path]]:
    """Files the shell writes job pids into; whatever of them still runs at the end (a red run)
    is ended here by its pid, after its command line shows it is our sleep."""
    files: list[Path] = []
    yield files
    for path in files:
        try:
            pid = int(path.read_text())
            if b"sleep\x00103" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            pass


def _stat(pid: int) -> tuple[str, int, int] | None:
    """State, process group and session of a live process; None once it ended (or a zombie)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    if fields[0] in ("Z", "X"):
        return None
    return fields[0], int(fields[2]), int(fields[3])


def _session(sid: int) -> list[int]:
    """Live processes whose session id is `sid`."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = _stat(int(name))
            if stat is not None and stat[2] == sid:
                found.append(int(name))
    return found


def _bash(cli: Cli) -> tuple[str, int]:
    created = cli.create("bash", "--norc", "--noprofile", "-i", options=("--env", "PS1=$ "))
    assert created["mechanism"] == "linux_autogroup"
    return created["sessionId"], created["childPid"]


def _pid(path: Path) -> int:
    return int(wait_until(lambda: path.exists() and path.read_text().strip(), what=f"{path.name}"))


def _start_jobs(cli: Cli, sid: str, leader: int, tmp_path: Path, recorded: list[Path]) -> list[int]:
    """A nohup job, and a job whose subshell forks two children and waits for them. Both
    ignore SIGHUP (which bash passes on to its jobs when it gets one), so only a kill ends them."""
    names = ("nohup", "child_a", "child_b", "subshell")
    files = [tmp_path / name for name in names]
    recorded.extend(files)
    nohup, child_a, child_b, subshell = files
    first = cli.run("run", sid, f"nohup sleep 1031 >/dev/null 2>&1 & echo $! > {nohup}").result
    assert first["completed"] is True
    job = f"(trap '' HUP; sleep 1032 & echo $! > {child_a}; sleep 1033 & echo $! > {child_b}; wait)"
    second = cli.run("run", sid, f"{job} & echo $! > {subshell}").result
    assert second["completed"] is True
    pids = [_pid(path) for path in files]
    for pid in pids:
        stat = wait_until(lambda pid=pid: _stat(pid), what=f"job {pid} to run")
        # The case is real: every job runs in the program's session, outside its process group.
        assert stat[2] == leader and stat[1] != leader, (pid, stat, leader)
    assert _stat(pids[1])[1] == _stat(pids[3])[1] == pids[3], "the subshell's children share its group"
    return pids


def _destroy_ends_every_job(cli: Cli, sid: str, leader: int, pids: list[int]) -> None:
    done = cli.run("destroy", sid)
    assert done.code == 0, (done.stdout, done.stderr)
    assert done.result["status"] == "destroyed"
    survivors = [pid for pid in pids if _stat(pid) is not None]
    assert survivors == [], f"jobs survived destroy: {survivors}"
    assert _session(leader) == []


def test_destroy_ends_the_jobs_of_an_interactive_shell(cli: Cli, tmp_path: Path, recorded: list[Path]) -> None:
    sid, leader = _bash(cli)
    pids = _start_jobs(cli, sid, leader, tmp_path, recorded)
    # SIGINT goes to the program's group only, as a terminal would send it: the jobs run on.
    sent = cli.run("signal", sid, "INT").result
    assert sent["delivered"] is True
    wait_until(lambda: cli.run("run", sid, "true").result["completed"], what="the prompt after ^C")
    assert all(_stat(pid) is not None for pid in pids), "SIGINT reached a job"
    _destroy_ends_every_job(cli, sid, leader, pids)
    assert cli.manifest(sid)["status"] == "destroyed"


def test_gc_keeps_a_session_while_a_job_of_the_exited_shell_runs(
    cli: Cli, tmp_path: Path, recorded: list[Path]
) -> None:
    sid, leader = _bash(cli)
    pids = _start_jobs(cli, sid, leader, tmp_path, recorded)
    # huponexit is off by default: bash exits and sends its jobs no SIGHUP.
    cli.run("run", sid, "exit", "--no-wait").result
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="the shell to exit")
    assert _stat(leader) is None
    assert all(_stat(pid) is not None for pid in pids), "the jobs should outlive the shell"
    report = cli.run("gc").result
    assert report["removedSessions"] == [], "gc removed a session whose jobs run (R20)"
    (skipped,) = report["skippedSessions"]
    assert skipped["reason"].startswith("the session's program group still runs"), skipped
    _destroy_ends_every_job(cli, sid, leader, pids)
    assert cli.run("gc").result["removedSessions"] == [sid]


CHAIN = Path(__file__).resolve().parent.parent / "fixtures" / "fork_chain.py"


def test_destroy_ends_a_job_that_is_a_fork_chain(cli: Cli, tmp_path: Path) -> None:
    """A job whose processes each fork a successor and end at once (no pause between forks): a
    scan sees it among the pids handed out last, and SIGSTOP to its group holds it for the
    kills (without the stop, chasing it by pid did not end it in 3 of 3 runs)."""
    sid, leader = _bash(cli)
    beat = tmp_path / "beat"
    cli.run("run", sid, f"(trap '' HUP; exec {sys.executable} {CHAIN} {beat} 20 0) &").result
    wait_until(beat.exists, what="the chain to start")
    assert beats(beat, 10.0)
    done = cli.run("destroy", sid)
    assert done.code == 0, (done.stdout, done.stderr)
    assert done.result["status"] == "destroyed"
    assert not beats(beat, 1.0), "the chain survived destroy"
    assert _session(leader) == []
