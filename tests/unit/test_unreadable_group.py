"""ForceSkipsUnreadableGroup: a plugin's system error becomes STORAGE_ERROR with its errno, and
only the errnos a retry does not change let destroy --force go on without the group check."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from agent_tty.lifecycle import destroy
from agent_tty.lifecycle.engine import Engine, unreadable
from agent_tty.platform import hookimpl
from agent_tty.platform.types import GroupRef, GroupVerdict
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.protocol.status import Status
from agent_tty.storage.files import write_record
from agent_tty.storage.home import Home
from agent_tty.storage.records import Manifest, ProgramRecord


class FailingScan:
    """A plugin whose /proc scan fails with one errno, `failures` times, then reads gone."""

    def __init__(self, code: int, failures: int = 99) -> None:
        self.code, self.failures, self.calls = code, failures, 0

    @hookimpl
    def agent_tty_judge_group(self, group: GroupRef) -> GroupVerdict | None:
        if group.mechanism != "failing":
            return None
        self.calls += 1
        if self.calls <= self.failures:
            raise OSError(self.code, errno.errorcode[self.code])
        return GroupVerdict.GONE


def _session(tmp_path: Path, plugin: FailingScan) -> tuple[Engine, Manifest]:
    engine = Engine(Home(tmp_path))
    engine.platform._register("failing", plugin)
    paths = engine.home.session("abc")
    paths.folder.mkdir(parents=True)
    write_record(paths.program, ProgramRecord(version=1, mechanism="failing", pid=4242))
    manifest = Manifest(
        version=1, session_id="abc", status=Status.EXITED, argv=("sh",), cols=80, rows=24,
        created_at=1.0, updated_at=1.0, socket_path="/tmp/x.sock", child_pid=4242,
    )
    return engine, manifest


@pytest.mark.parametrize("code", [errno.EIO, errno.EACCES, errno.EPERM, errno.ENOTDIR])
def test_a_scan_that_keeps_failing_is_unreadable(tmp_path: Path, code: int) -> None:
    plugin = FailingScan(code)
    engine, manifest = _session(tmp_path, plugin)
    with pytest.raises(AgentTtyError) as raised:
        engine.platform.judge_group(engine.group(engine.home.session("abc")))  # type: ignore[arg-type]
    assert raised.value.code is ErrorCode.STORAGE_ERROR and unreadable(raised.value)
    reason = destroy._unchecked_group(engine, engine.home.session("abc"), manifest)
    assert reason == f"cannot judge the program's group: {errno.errorcode[code]}"
    assert plugin.calls == 3  # one above, then the two tries of destroy --force


@pytest.mark.parametrize("code", [errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.EAGAIN, errno.EINTR])
def test_other_errnos_fail_the_destroy(tmp_path: Path, code: int) -> None:
    engine, manifest = _session(tmp_path, FailingScan(code))
    with pytest.raises(AgentTtyError) as raised:
        destroy._unchecked_group(engine, engine.home.session("abc"), manifest)
    assert not unreadable(raised.value)


def test_a_one_off_failure_is_checked_again(tmp_path: Path) -> None:
    """EIO once (a network file system, a one-off /proc read): the second try checks the group."""
    plugin = FailingScan(errno.EIO, failures=1)
    engine, manifest = _session(tmp_path, plugin)
    assert destroy._unchecked_group(engine, engine.home.session("abc"), manifest) is None
    assert plugin.calls == 2
