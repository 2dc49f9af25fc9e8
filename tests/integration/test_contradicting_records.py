"""Records that contradict the living: an edited session.json must never make gc remove, or
list, inspect and gc kill, a session whose host or program still runs (issue 9, item 5)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Cli, default_mechanism, group_members, pid_alive, wait_until

pytestmark = pytest.mark.integration

HUP_IGNORING = ("sh", "-c", 'trap "" HUP; sleep 300 & wait')


@pytest.fixture(params=sorted({"linux_autogroup", default_mechanism()}))
def cli(request, cli: Cli) -> Cli:  # type: ignore[no-untyped-def]
    cli.pin = request.param
    return cli


def _replace(path: Path, data: bytes) -> None:
    """As the product writes a record: a temp file in the same folder, then a rename, with the
    record's owner and mode kept."""
    before = os.stat(path)
    temp = path.with_name(f".{path.name}.test.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chown(temp, before.st_uid, before.st_gid)
    os.chmod(temp, before.st_mode & 0o777)
    os.rename(temp, path)


def _edit(path: Path, **changes: object) -> bytes:
    """Rewrite the record with `changes`; returns the bytes it held, to restore them."""
    saved = path.read_bytes()
    record = json.loads(saved)
    record.update(changes)
    _replace(path, json.dumps(record).encode())
    return saved


def _skip_reason(done_result: dict, sid: str) -> str:
    reasons = {s["sessionId"]: s["reason"] for s in done_result["skippedSessions"]}
    assert sid in reasons, done_result
    return reasons[sid]


def _destroy_and_check_ended(cli: Cli, created: dict) -> None:
    done = cli.run("destroy", created["sessionId"])
    assert done.code == 0, done.stdout
    assert done.result["status"] == "destroyed"
    wait_until(lambda: not pid_alive(created["hostPid"]), what="host to end")
    wait_until(lambda: not group_members(created["childPid"]), what="group to end")


@pytest.mark.parametrize("case", ["gc", "dry-run", "no-program-record"])
def test_gc_keeps_a_destroyed_manifest_whose_host_runs(cli: Cli, case: str) -> None:
    """(a) session.json edited to destroyed while its host and program run: gc judges the host
    through host.json, whatever the manifest says, and keeps the folder. With program.json
    moved away no group check can keep it: the host's judgement alone does."""
    created = cli.create("sleep", "300")
    sid, host, child = created["sessionId"], created["hostPid"], created["childPid"]
    folder = cli.folder(sid)
    saved = _edit(folder / "session.json", status="destroyed")
    if case == "no-program-record":
        os.rename(folder / "program.json", cli.home / "program.json.away")

    done = cli.run("gc", *(["--dry-run"] if case == "dry-run" else []))
    assert done.code == 0, done.stdout
    assert sid not in done.result["removedSessions"], "gc removed the folder of a session whose host runs"
    assert folder.is_dir()
    assert _skip_reason(done.result, sid) == f"the manifest says destroyed but its host (pid {host}) is alive"
    assert pid_alive(host) and pid_alive(child)

    if case == "no-program-record":
        os.rename(cli.home / "program.json.away", folder / "program.json")
    _replace(folder / "session.json", saved)
    _destroy_and_check_ended(cli, created)
    assert sid in cli.run("gc").result["removedSessions"]


def test_gc_keeps_a_destroyed_manifest_no_destroy_wrote_while_its_group_runs(cli: Cli) -> None:
    """(a) The host is dead and the program (which ignores the hang-up) runs on, but session.json
    says destroyed without the marker every destroy writes first: no destroy waited this group
    out, so gc judges it and keeps the folder."""
    created = cli.create(*HUP_IGNORING)
    sid, host, pgid = created["sessionId"], created["hostPid"], created["childPid"]
    wait_until(lambda: len(group_members(pgid)) >= 2, what="sleep to start")
    folder = cli.folder(sid)
    saved = _edit(folder / "session.json", status="destroyed")
    os.kill(host, signal.SIGKILL)  # the session's host, started by our create
    wait_until(lambda: not pid_alive(host), what="host death")
    assert group_members(pgid), "the program did not outlive its host"

    done = cli.run("gc")
    assert done.code == 0, done.stdout
    assert sid not in done.result["removedSessions"], "gc removed the folder of a session whose group runs"
    assert folder.is_dir()
    assert _skip_reason(done.result, sid) == (
        "the manifest says destroyed but no destroy recorded it (no destroyed marker), "
        "and the session's program group still runs"
    )
    assert group_members(pgid)

    _replace(folder / "session.json", saved)  # running again: destroy reconciles the dead host
    done = cli.run("destroy", sid)
    assert done.code == 0, done.stdout
    assert done.result["status"] == "destroyed"
    assert group_members(pgid) == []
    assert sid in cli.run("gc").result["removedSessions"]


@pytest.fixture
def reaped_pid() -> int:
    """The pid of a process we started and reaped: no such process now."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


@pytest.mark.parametrize("command", ["list", "inspect", "gc"])
@pytest.mark.parametrize("other", ["reaped", "unrelated"])
def test_an_edited_host_pid_never_reads_a_live_host_dead(
    cli: Cli, unrelated: Callable[[], int], reaped_pid: int, command: str, other: str
) -> None:
    """(b) session.json's hostPid edited to another pid: host.json still proves the real host
    alive, so no reconcile records the session failed or kills its program, and the process
    hostPid names (one of ours) gets no signal either."""
    created = cli.create("sh", "-c", "sleep 300")
    sid, host, child = created["sessionId"], created["hostPid"], created["childPid"]
    folder = cli.folder(sid)
    named = reaped_pid if other == "reaped" else unrelated()
    if other == "reaped":
        assert not pid_alive(named)
    saved = _edit(folder / "session.json", hostPid=named)

    done = cli.run(*{"list": ["list"], "inspect": ["inspect", sid], "gc": ["gc"]}[command])
    assert done.code == 0, done.stdout
    assert pid_alive(child) and group_members(child), f"{command} killed the program of a live host"
    assert pid_alive(host)
    assert folder.is_dir()
    manifest = cli.manifest(sid)
    assert manifest["status"] == "running" and manifest["failure"] is None, manifest
    assert not (folder / "destroyed").exists()
    if command == "inspect":
        assert done.result["derived"]["host"] == "alive"
    if command == "gc":
        assert _skip_reason(done.result, sid) == "session host is still alive (running)"
    if other == "unrelated":
        assert pid_alive(named), f"{command} signalled the unrelated process hostPid names"

    _replace(folder / "session.json", saved)
    _destroy_and_check_ended(cli, created)
