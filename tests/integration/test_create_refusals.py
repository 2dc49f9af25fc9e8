"""create when the system refuses it a process or a write: one clear error that names the
limit (RESOURCE_LIMIT) or the errno (ENOSPC), no traceback, and nothing left running."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import NOT_PINNED, Cli, processes_of_home

pytestmark = [pytest.mark.integration, NOT_PINNED]

ROOT = os.geteuid() == 0
PIDS_V1 = Path("/sys/fs/cgroup/pids")


def _create(cli: Cli, *wrapper: str) -> tuple[int, dict]:
    argv = [*wrapper, *cli.command, "--json", "create", "--", "bash", "--norc"]
    done = subprocess.run(argv, capture_output=True, text=True, env=cli.env(), timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def _nothing_left(home: Path) -> None:
    deadline = time.monotonic() + 5
    while processes_of_home(home) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_of_home(home) == []


@pytest.mark.skipif(ROOT, reason="root is not held to RLIMIT_NPROC")
def test_create_past_the_process_limit_names_it_and_leaves_no_folder(cli: Cli) -> None:
    # The user already runs more than one process: the CLI's own start of the host is refused.
    code, envelope = _create(cli, "prlimit", "--nproc=1")
    assert code == 1, envelope
    error = envelope["error"]
    assert error["code"] == "RESOURCE_LIMIT", error
    assert "RLIMIT_NPROC" in error["message"] and error["details"]["errno"] == "EAGAIN"
    assert list((cli.home / "sessions").iterdir()) == []  # no folder without a manifest
    _nothing_left(cli.home)


@pytest.fixture
def pids_cgroup(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A cgroup v1 pids group of its own: its pids.max bounds the processes made inside it."""
    if not ROOT or not os.access(PIDS_V1, os.W_OK):
        pytest.skip("needs root and a writable cgroup v1 pids hierarchy")
    group = PIDS_V1 / f"agent-tty-test-{os.getpid()}-{tmp_path.name}"
    group.mkdir()
    try:
        yield group
    finally:
        deadline = time.monotonic() + 10
        while (group / "cgroup.procs").read_text().split() and time.monotonic() < deadline:
            time.sleep(0.05)
        group.rmdir()


def test_create_whose_program_fork_is_refused_names_the_limit(cli: Cli, pids_cgroup: Path) -> None:
    (pids_cgroup / "pids.max").write_text("2")  # the CLI and its host; the program's fork fails
    enter = f'echo $$ > {pids_cgroup / "cgroup.procs"} && exec "$@"'
    code, envelope = _create(cli, "sh", "-c", enter, "sh")
    assert code == 1, envelope
    error = envelope["error"]
    assert error["code"] == "RESOURCE_LIMIT" and error["details"]["reason"] == "resource-limit", error
    assert "could not start" in error["message"] and "pids.max" in error["message"]
    assert cli.manifest(error["details"]["sessionId"])["status"] == "failed"
    _nothing_left(cli.home)


@pytest.fixture
def small_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A 256 KiB tmpfs: a file fills it to the free space a test asks for."""
    if not ROOT:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


@pytest.mark.parametrize("free_kib", [8, 12])
def test_create_on_a_nearly_full_disk_names_enospc(small_disk: Path, free_kib: int) -> None:
    with open(small_disk / "fill", "wb") as fill:
        fill.write(b"\0" * ((256 - free_kib) * 1024))
    cli = Cli(small_disk / "home")
    code, envelope = _create(cli)
    assert code == 8, envelope
    error = envelope["error"]
    assert error["code"] == "STORAGE_ERROR" and error["details"]["errno"] == "ENOSPC", error
    assert "No space left on device" in error["message"]
    _nothing_left(cli.home)
