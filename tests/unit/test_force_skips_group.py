"""ForceSkipsUnreadableGroup, gc's side: gc names destroy --force only when the read and first
check that destroy --force runs fail with an errno a retry does not change (force_skips_group),
with the seed's two wordings; and a record that exists but does not parse still proves nothing."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from agent_tty.lifecycle import destroy
from agent_tty.lifecycle.engine import Engine
from agent_tty.lifecycle.gc import GcOptions, gc
from agent_tty.platform import hookimpl
from agent_tty.platform.types import GroupRef, GroupVerdict
from agent_tty.protocol.status import Status
from agent_tty.storage.files import write_record
from agent_tty.storage.home import Home
from agent_tty.storage.records import Manifest, ProgramRecord


class FailingScan:
    """A plugin whose /proc scan fails with one errno (0: it reads gone)."""

    def __init__(self, code: int) -> None:
        self.code = code

    @hookimpl
    def agent_tty_judge_group(self, group: GroupRef) -> GroupVerdict | None:
        if group.mechanism != "failing":
            return None
        if self.code:
            raise OSError(self.code, errno.errorcode[self.code])
        return GroupVerdict.GONE

    @hookimpl
    def agent_tty_group_alive(self, group: GroupRef) -> bool | None:
        return False if group.mechanism == "failing" else None


def _session(tmp_path: Path, code: int, status: Status = Status.EXITED) -> tuple[Engine, Manifest]:
    engine = Engine(Home(tmp_path))
    engine.platform._register("failing", FailingScan(code))
    paths = engine.home.session("abc")
    paths.folder.mkdir(parents=True, mode=0o700)
    write_record(paths.program, ProgramRecord(version=1, mechanism="failing", pid=4242))
    manifest = Manifest(
        version=1, session_id="abc", status=status, argv=("sh",), cols=80, rows=24,
        created_at=1.0, updated_at=1.0, socket_path="/tmp/x.sock", child_pid=4242,
    )
    write_record(paths.manifest, manifest)
    return engine, manifest


@pytest.mark.parametrize("code", [errno.EIO, errno.EACCES])
def test_gc_names_destroy_force_when_its_check_fails_that_way(tmp_path: Path, code: int) -> None:
    engine, manifest = _session(tmp_path, code)
    assert destroy.force_skips_group(engine, engine.home.session("abc"), manifest)
    (skipped,) = gc(engine, GcOptions(dry_run=True)).skipped
    assert skipped["reason"] == (
        "failed to check the session's program group (destroy --force removes it): "
        f"cannot judge the program's group: {errno.errorcode[code]}"
    )


@pytest.mark.parametrize("code", [errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.EAGAIN, errno.EINTR])
def test_gc_names_no_way_out_for_other_errnos(tmp_path: Path, code: int) -> None:
    engine, manifest = _session(tmp_path, code)
    assert not destroy.force_skips_group(engine, engine.home.session("abc"), manifest)
    (skipped,) = gc(engine, GcOptions(dry_run=True)).skipped
    assert skipped["reason"].startswith("STORAGE_ERROR: ") and "destroy --force" not in skipped["reason"]


def test_no_way_out_while_the_host_is_not_proven_dead(tmp_path: Path) -> None:
    """An active session: destroy --force goes on only once the host reads dead (here it reads
    unknown: no hostPid), so gc names no way out even though the group's check fails."""
    engine, manifest = _session(tmp_path, errno.EIO, Status.RUNNING)
    assert manifest.host_pid is None
    assert not destroy.force_skips_group(engine, engine.home.session("abc"), manifest)


def test_a_group_that_can_be_checked_is_no_way_out(tmp_path: Path) -> None:
    engine, manifest = _session(tmp_path, 0)
    assert not destroy.force_skips_group(engine, engine.home.session("abc"), manifest)


def test_a_record_that_does_not_parse_proves_nothing(tmp_path: Path) -> None:
    """Only a missing or unparsable record reads as no group; destroy --force then goes on
    unchecked while the manifest names the program (its second read classifies the record)."""
    engine, manifest = _session(tmp_path, 0)
    paths = engine.home.session("abc")
    paths.program.write_text("{not json")
    assert destroy._read_group(engine, paths) is None
    reason = destroy._unchecked_group(engine, paths, manifest)
    assert reason is not None and "is missing or does not parse" in reason
