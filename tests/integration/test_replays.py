"""Races forced with the replay tool: each holds one file-system call in one process to force
the order that breaks a rule without its guard, and checks the safe outcome."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.conftest import Cli, group_members, pid_alive, processes_of_home, wait_until

pytestmark = pytest.mark.integration


def _held(log: Path, count: int = 1) -> bool:
    return log.exists() and log.read_text().count("hold ") >= count


def test_reconcile_rereads_before_it_writes(cli: Cli, tmp_path: Path) -> None:
    """ReconcileRereads (R4): the program exits and its host ends while list judges the host;
    list must not write failed over the exit it did not read."""
    # The program outlives list's start even on a loaded machine (list reads host.json only
    # while the session is active), and ends during list's 5 s hold.
    created = cli.create("sh", "-c", "sleep 2; exit 0")
    sid = created["sessionId"]
    log = tmp_path / "replay.log"
    listing = cli.start("list", env=cli.replay_env("list:read:/host.json:1:5000", log))
    wait_until(lambda: _held(log), what="list to hold its host.json read")
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exit")
    wait_until(lambda: not pid_alive(created["hostPid"]), what="host to end")
    listing.communicate(timeout=30)
    assert listing.returncode == 0
    manifest = cli.manifest(sid)
    assert manifest["status"] == "exited" and manifest["exitCode"] == 0


def test_host_death_in_its_start_up_write_leaves_a_named_program(cli: Cli, tmp_path: Path) -> None:
    """RecordsProgramSync (R16): program.json names the program before the start-up write, so
    destroy --force can stop it after the host died in that write."""
    log = tmp_path / "replay.log"
    env = cli.replay_env("host:rename:/session.json:1:30000", log)
    creating = cli.start("create", "--", "sh", "-c", 'trap "" HUP; sleep 300 & wait', env=env)
    wait_until(lambda: _held(log), what="host to hold its start-up write")
    (folder,) = (cli.home / "sessions").iterdir()
    program = json.loads((folder / "program.json").read_text())
    manifest = json.loads((folder / "session.json").read_text())
    assert manifest["childPid"] is None, "the start-up write is still held"
    wait_until(lambda: len(group_members(program["pid"])) >= 2, what="sleep to start")
    os.kill(manifest["hostPid"], signal.SIGKILL)
    creating.communicate(timeout=30)
    assert creating.returncode == 6
    done = cli.run("destroy", folder.name, "--force")
    assert done.code == 0, done.stdout
    assert group_members(program["pid"]) == []


def test_host_death_before_program_json_leaves_no_program(cli: Cli, tmp_path: Path) -> None:
    """StartGate (R16): between the spawn and program.json nothing names the program, so a host
    killed there (destroy --force, the OOM killer) must leave no program running: the program
    is held at its start until program.json is written, and never starts without it."""
    log = tmp_path / "replay.log"
    env = cli.replay_env("host:rename:/program.json:1:30000", log)
    creating = cli.start("create", "--", "sh", "-c", 'trap "" HUP; sleep 300 & wait', env=env)
    wait_until(lambda: _held(log), what="host to hold its program.json write")
    (folder,) = (cli.home / "sessions").iterdir()
    assert not (folder / "program.json").exists(), "the program.json write is still held"
    host_pid = json.loads((folder / "session.json").read_text())["hostPid"]
    held = [pid for pid in processes_of_home(cli.home) if pid not in (host_pid, creating.pid) and b"sleep" in _cmdline(pid)]
    assert held == [], "the program runs before program.json names it"
    done = cli.run("destroy", folder.name, "--force")
    assert done.code == 0, done.stdout
    creating.communicate(timeout=30)
    assert not pid_alive(host_pid)
    # What the held program would have been: nothing of it may run, now or once released.
    wait_until(lambda: processes_of_home(cli.home) == [], timeout=5, what="nothing of the session to run")
    assert json.loads((folder / "session.json").read_text())["status"] == "destroyed"


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_destroy_run_by_the_program_before_the_start_up_write(cli: Cli, tmp_path: Path) -> None:
    """InsideCheckReadsEnv (R14): no manifest names the program yet, so the inside check must
    read AGENT_TTY_SESSION_ID; destroy re-runs outside and reports."""
    out = tmp_path / "out.json"
    log = tmp_path / "replay.log"
    command = " ".join(cli.command)
    env = cli.replay_env("host:rename:/session.json:1:4000", log)
    creating = cli.start(
        "create", "--", "sh", "-c", f'{command} --json destroy "$AGENT_TTY_SESSION_ID" --force > {out}; sleep 300', env=env
    )
    creating.communicate(timeout=60)
    wait_until(lambda: out.exists() and out.read_text().strip(), timeout=20, what="destroy's report")
    doc = json.loads(out.read_text())
    assert doc["ok"] is True and doc["result"]["destroyed"] is True, doc
    (folder,) = (cli.home / "sessions").iterdir()
    assert json.loads((folder / "session.json").read_text())["status"] == "destroyed"


def test_reconcile_repairs_a_destroyed_it_wrote_over(cli: Cli, tmp_path: Path) -> None:
    """ReconcileRepairsDestroyed (R18): list writes failed after destroy --force wrote destroyed."""
    created = cli.create("cat")
    sid = created["sessionId"]
    os.kill(created["hostPid"], signal.SIGKILL)
    wait_until(lambda: not pid_alive(created["hostPid"]), what="host death")
    log = tmp_path / "replay.log"
    listing = cli.start("list", env=cli.replay_env("list:rename:/session.json:1:4000", log))
    wait_until(lambda: _held(log), what="list to hold its failed write")
    done = cli.run("destroy", sid, "--force")
    assert done.code == 0 and done.result["destroyed"] is True
    listing.communicate(timeout=30)
    assert cli.manifest(sid)["status"] == "destroyed"


def test_reconcile_repairs_a_marked_failed_a_killed_reconcile_left(cli: Cli, tmp_path: Path) -> None:
    """ReconcileRepairsMarked (R18): the reconcile that wrote failed over destroyed dies before
    its repair; the next reconcile finds the marker and writes destroyed."""
    created = cli.create("cat")
    sid = created["sessionId"]
    os.kill(created["hostPid"], signal.SIGKILL)
    wait_until(lambda: not pid_alive(created["hostPid"]), what="host death")
    log = tmp_path / "replay.log"
    hold = "list:rename:/session.json:1:4000,list:rename:/session.json:2:60000"
    listing = cli.start("list", env=cli.replay_env(hold, log))
    wait_until(lambda: _held(log), what="list to hold its failed write")
    assert cli.run("destroy", sid, "--force").result["destroyed"] is True
    wait_until(lambda: _held(log, 2), timeout=20, what="list to hold its repair")
    listing.kill()
    listing.communicate(timeout=30)
    assert cli.manifest(sid)["status"] == "failed", "the killed reconcile left failed"
    after = cli.run("list", "--all").result["sessions"]
    assert after[0]["status"] == "destroyed"
    assert cli.manifest(sid)["status"] == "destroyed"


def test_host_writes_land_in_call_order(cli: Cli, tmp_path: Path) -> None:
    """HostSerializesWrites (R3, R4): the program exits at once while the host's start-up write
    (running) is held; the exit write comes after it in call order, so the manifest ends
    exited with the program's code and never reads running again."""
    log = tmp_path / "replay.log"
    # The hold lasts until another session.json rename has landed, so a write made beside the
    # held one (the guard's mutant: each write in a thread of its own) lands first and the held
    # running lands over it, on any machine's timing. The single-threaded host makes no other
    # write while it is held, so the hold runs to its 20 s cap; create waits for it longer
    # than its default 5 s, or it gives the session up.
    hold = "host:rename:/session.json:1:20000:until=/session.json"
    env = {**cli.replay_env(hold, log), "AGENT_TTY_CREATE_TIMEOUT_S": "60"}
    creating = cli.start("create", "--", "sh", "-c", "exit 3", env=env)
    wait_until(lambda: _held(log), what="host to hold its start-up write")
    creating.communicate(timeout=60)
    (folder,) = (cli.home / "sessions").iterdir()
    host_pid = json.loads((folder / "session.json").read_text())["hostPid"]
    wait_until(lambda: not pid_alive(host_pid), timeout=20, what="host to end")
    manifest = json.loads((folder / "session.json").read_text())
    assert manifest["status"] == "exited" and manifest["exitCode"] == 3, manifest
    assert " not met " in log.read_text(), "a session.json write landed while the start-up write was held"
    (session,) = cli.run("list", "--all").result["sessions"]
    assert session["status"] == "exited"


def test_reconciles_leave_a_terminal_record_alone(cli: Cli) -> None:
    """ReconcileSkipsTerminal (R2, R4): the host wrote its terminal record and ended before a
    reconcile's first read (here inspect and gc --dry-run, which reconcile every session). A
    reconcile then writes nothing: a spawn failure keeps its reason (no host-death written over
    it) and an exit keeps its record, endedAt too. The re-reads' terminal returns cover the
    first one (the seed's mutant-ReconcileSkipsTerminal passes); without all three the records
    are rewritten."""
    failed = cli.run("create", "--", "/nonexistent/agent-tty-test-program")
    assert failed.code != 0
    (folder,) = (cli.home / "sessions").iterdir()
    exited = cli.create("sh", "-c", "exit 3")
    wait_until(lambda: cli.manifest(exited["sessionId"])["status"] == "exited", what="exit")
    records = {folder.name: folder / "session.json", exited["sessionId"]: cli.folder(exited["sessionId"]) / "session.json"}
    for path in records.values():
        host_pid = json.loads(path.read_text())["hostPid"]
        wait_until(lambda pid=host_pid: not pid_alive(pid), timeout=20, what="host to end")
    before = {sid: path.read_bytes() for sid, path in records.items()}
    for sid in records:
        assert cli.run("inspect", sid).code == 0
    assert cli.run("gc", "--dry-run").code == 0
    after = {sid: path.read_bytes() for sid, path in records.items()}
    assert after == before
    assert json.loads(after[folder.name])["failure"]["reason"] == "spawn-failed"
    assert json.loads(after[exited["sessionId"]])["exitCode"] == 3
