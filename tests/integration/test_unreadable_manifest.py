"""A live session whose manifest cannot be read is not beyond reach: destroy --force stops what
host.json and program.json prove, leaves the manifest as it is with the destroyed marker beside
it, and gc removes the folder once nothing of it runs (ManifestlessForce)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import Cli, group_members, pid_alive, wait_until

pytestmark = pytest.mark.integration


def _corrupt(path: Path, kind: str) -> None:
    text = path.read_text()
    if kind == "folder":
        path.unlink()
        path.mkdir()
        return
    path.write_text(
        {
            "empty": "",
            "half-written": text[: len(text) // 2],
            "bad-json": "{not json",
            "wrong-version": text.replace('"version":1', '"version":99'),
            "wrong-type": "[]",
        }[kind]
    )


@pytest.mark.parametrize("kind", ["empty", "half-written", "bad-json", "wrong-version", "wrong-type", "folder"])
def test_destroy_force_stops_a_live_session_whose_manifest_cannot_be_read(cli: Cli, kind: str) -> None:
    created = cli.create("sh", "-c", 'trap "" HUP; sleep 300 & exec sleep 301')
    sid, host, pgid = created["sessionId"], created["hostPid"], created["childPid"]
    wait_until(lambda: len(group_members(pgid)) == 2, what="the program and its leftover")
    members = group_members(pgid)
    manifest = cli.folder(sid) / "session.json"
    _corrupt(manifest, kind)

    plain = cli.run("destroy", sid)
    assert plain.code == 8 and plain.error["code"] == "STORAGE_ERROR", plain.stdout
    assert "destroy --force" in plain.error["message"]
    assert pid_alive(host) and all(pid_alive(pid) for pid in members), "a plain destroy stopped nothing"

    forced = cli.run("destroy", sid, "--force")
    assert forced.code == 0, forced.stdout
    assert forced.result["status"] == "destroyed" and forced.result["manifestUnreadable"], forced.result
    assert "groupUnchecked" not in forced.result
    wait_until(lambda: not pid_alive(host), what="the host to end")
    assert not any(pid_alive(pid) for pid in members), "the program or its leftover survived destroy --force"
    assert (cli.folder(sid) / "destroyed").exists()
    assert manifest.is_dir() if kind == "folder" else manifest.is_file(), "the manifest is left as it was"

    report = cli.run("gc").result
    assert report["removedSessions"] == [sid], report
    assert not cli.folder(sid).exists()


def test_without_host_json_nothing_is_stopped(cli: Cli) -> None:
    """Nothing proves the host: destroy --force refuses rather than kill on a guess."""
    created = cli.create("sleep", "300")
    sid, host = created["sessionId"], created["hostPid"]
    folder = cli.folder(sid)
    _corrupt(folder / "session.json", "empty")
    os.unlink(folder / "host.json")
    forced = cli.run("destroy", sid, "--force")
    assert forced.code == 8 and "nothing was stopped" in forced.error["message"], forced.stdout
    assert pid_alive(host) and pid_alive(created["childPid"])
    report = cli.run("gc").result
    assert sid in {s["sessionId"] for s in report["skippedSessions"]}, report
    os.kill(host, 9)  # our own host, by pid: the fixture's cleanup ends the program
    wait_until(lambda: not pid_alive(host), what="the host to end")


def test_gc_keeps_a_marked_folder_while_its_group_runs(cli: Cli) -> None:
    """A destroyed marker beside an unreadable manifest does not let gc remove a folder whose
    program.json proves a running group."""
    created = cli.create("sh", "-c", 'trap "" HUP; sleep 300 & exit 0')
    sid, pgid = created["sessionId"], created["childPid"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exited")
    (leftover,) = group_members(pgid)
    folder = cli.folder(sid)
    _corrupt(folder / "session.json", "bad-json")
    (folder / "destroyed").write_text("")
    report = cli.run("gc").result
    reasons = {s["sessionId"]: s["reason"] for s in report["skippedSessions"]}
    assert "program's group reads owned" in reasons[sid], reasons
    assert folder.is_dir() and pid_alive(leftover)
    assert cli.run("destroy", sid, "--force").code == 0
    assert not pid_alive(leftover)
    assert cli.run("gc").result["removedSessions"] == [sid]
