"""A full disk and an unwritable session folder: the session keeps running, the record stays
consistent, and the failed transition can be run again (issue 11, items 1 and 2)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import Cli, pid_alive, wait_until

pytestmark = pytest.mark.integration

CHATTY = ("sh", "-c", 'i=0; while :; do i=$((i+1)); echo "chatty line $i of a program that prints a lot"; sleep 0.005; done')
QUIET = (shutil.which("bash") or "sh",) + (("--norc", "--noprofile") if shutil.which("bash") else ())


@pytest.fixture
def tmpfs_home(tmp_path: Path) -> Iterator[Path]:
    """tmp_path/home (the cli fixture's Home) on a 2 MiB tmpfs; unmounted after the cli fixture's
    teardown (requested first, torn down last)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a size-limited tmpfs Home needs root")
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(home)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield home
    finally:
        subprocess.run(["umount", "-l", str(home)], check=False)


def fill(folder: Path) -> Path:
    """Write a file until the file system holds no more."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as handle:
        for size in (1 << 16, 4096, 512, 64, 1):
            try:
                while True:
                    handle.write(b"\0" * size)
            except OSError as err:
                assert err.errno == errno.ENOSPC, err
    return filler


def log_lines(cli: Cli, session_id: str) -> list[dict]:
    raw = (cli.folder(session_id) / "events.jsonl").read_bytes()
    assert raw.endswith(b"\n"), raw[-200:]
    return [json.loads(line) for line in raw.splitlines()]


def test_a_full_disk_keeps_sessions_running(tmpfs_home: Path, cli: Cli, tmp_path: Path) -> None:
    chatty = cli.create(*CHATTY)["sessionId"]
    quiet = cli.create(*QUIET)["sessionId"]
    hosts = {sid: cli.manifest(sid)["hostPid"] for sid in (chatty, quiet)}
    assert cli.run("wait", chatty, "--text", "chatty line 3", "--timeout", "10s").code == 0
    before = log_lines(cli, chatty)

    filler = fill(tmpfs_home)
    time.sleep(1.5)  # the chatty program prints on: its host's log writes fail
    typed = cli.run("type", quiet, "echo quiet-$((6*7))\r")
    assert typed.code == 0, typed.stdout
    assert cli.run("wait", quiet, "--text", "quiet-42", "--timeout", "10s").code == 0

    # Both hosts live and answer; every command works or says why it cannot.
    for sid, pid in hosts.items():
        assert pid_alive(pid), f"the host of {sid} died: {(cli.folder(sid) / 'host.log').read_text(errors='replace')}"
        inspected = cli.run("inspect", sid)
        assert inspected.code == 0, inspected.stdout
        assert inspected.result["status"] == "running"
        assert inspected.result["derived"]["host"] == "alive"
        assert inspected.result["derived"]["homeNearlyFull"] is True
    screen = cli.run("snapshot", chatty)
    assert screen.code == 0 and "chatty line" in screen.stdout
    assert cli.run("list").code == 0
    doctor = cli.run("doctor")
    assert any("nearly full" in warning for warning in doctor.doc["result"]["warnings"]), doctor.stdout
    refused = cli.run("destroy", chatty, timeout=30)
    assert refused.code == 8, refused.stdout
    assert refused.error["code"] == "STORAGE_ERROR" and "No space left" in refused.error["message"], refused.stdout
    assert cli.run("type", chatty, "x").code == 0  # a failed destroy left the session commandable

    filler.unlink()
    # Within the back-off (at most 5 s) the host writes one gap event and the manifest flag.
    wait_until(lambda: any(e.get("type") == "gap" for e in log_lines(cli, chatty)[1:]), timeout=15, what="a gap event")
    wait_until(lambda: cli.manifest(chatty).get("logIncomplete"), timeout=15, what="logIncomplete in the manifest")
    lines = log_lines(cli, chatty)
    assert lines[: len(before)] == before  # nothing already written is lost
    seqs = [e["seq"] for e in lines[1:]]
    assert seqs == sorted(set(seqs)), "seqs must stay in order"
    gap = next(e for e in lines[1:] if e["type"] == "gap")
    flag = cli.manifest(chatty)["logIncomplete"]
    assert gap["eventsLost"] > 0 and gap["bytesLost"] > 0 and flag["eventsLost"] >= gap["eventsLost"]
    assert "chatty line" in next(e["data"] for e in reversed(lines) if e["type"] == "output")  # logging again
    wait_until(  # the input event was written, on time or (kept in memory) once space returned
        lambda: any(e["type"] == "input" and "quiet-" in e["data"] for e in log_lines(cli, quiet)[1:]),
        timeout=15,
        what="the quiet session's input event",
    )
    doctor = cli.run("doctor")
    assert any(chatty in warning and "incomplete" in warning for warning in doctor.doc["result"]["warnings"])
    from agent_tty.terminal.replay import open_log

    with open_log(cli.folder(chatty) / "events.jsonl") as (_header, events):
        assert any(event.type == "gap" for event in events)  # the log with its gap still parses

    for sid in (chatty, quiet):
        done = cli.run("destroy", sid, timeout=30)
        assert done.code == 0, done.stdout
        assert cli.manifest(sid)["status"] == "destroyed"
        log = cli.folder(sid) / "host.log"
        assert not log.exists() or log.read_text() == ""
    replayed = cli.run("snapshot", chatty)  # an ended session's screen, replayed across the gap
    assert replayed.code == 0 and replayed.result["source"] == "replay", replayed.stdout
    assert cli.run("record", "export", chatty, "--out", str(tmp_path / "chatty.cast")).code == 0
    assert cli.manifest(chatty)["logIncomplete"] == flag or cli.manifest(chatty)["logIncomplete"]["eventsLost"] >= flag["eventsLost"]


@contextmanager
def unwritable(folder: Path) -> Iterator[None]:
    """The folder refuses new files: a read-only bind mount as root (root ignores modes),
    mode 500 otherwise."""
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True)
            yield
        finally:
            subprocess.run(["umount", str(folder)], check=True)
    else:
        folder.chmod(0o500)
        try:
            yield
        finally:
            folder.chmod(0o700)


def test_a_failed_destroy_write_can_be_retried(cli: Cli) -> None:
    sid = cli.create("sh")["sessionId"]
    with unwritable(cli.folder(sid)):
        failed = cli.run("destroy", sid, timeout=30)
        assert failed.code == 8, failed.stdout
        assert failed.error["code"] == "STORAGE_ERROR"
        assert cli.manifest(sid)["status"] == "running"
    typed = cli.run("type", sid, "echo again-$((6*7))\r")
    assert typed.code == 0, typed.stdout  # the host is not wedged in a destroy
    assert cli.run("wait", sid, "--text", "again-42", "--timeout", "10s").code == 0
    started = time.monotonic()
    done = cli.run("destroy", sid, timeout=30)
    assert done.code == 0, done.stdout
    assert time.monotonic() - started < 5
    assert cli.manifest(sid)["status"] == "destroyed"


def test_a_failed_exit_write_is_retried(cli: Cli) -> None:
    """The program exits while the folder refuses writes: the host keeps retrying the exited
    record (back-off) and writes it once it can, instead of dying with the session `running`."""
    sid = cli.create("sh")["sessionId"]
    host = cli.manifest(sid)["hostPid"]
    with unwritable(cli.folder(sid)):
        assert cli.run("type", sid, "exit 3\r").code == 0
        time.sleep(1.0)
        assert pid_alive(host)
        assert cli.manifest(sid)["status"] in ("running", "exiting")
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", timeout=15, what="the exited record")
    assert cli.manifest(sid)["exitCode"] == 3
    wait_until(lambda: not pid_alive(host), timeout=10, what="the host's end")
