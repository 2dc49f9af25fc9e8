"""The small reads and opens that keep a record from reaching beyond this user's own things:
the real uid from /proc/PID/status, and linux_cgroup's folder-by-folder open (no symlink, no
other file system, our own folders only)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


def test_real_uid_is_the_first_field_of_uid() -> None:
    from agent_tty_plugins._posix import procfs

    assert procfs.parse_real_uid("Name:\tsudo\nUid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n") == 1000
    assert procfs.parse_real_uid("Name:\tx\n") is None
    assert procfs.parse_real_uid("Uid:\tbroken\n") is None
    assert procfs.read_real_uid("self") == os.getuid()
    assert procfs.read_real_uid(2**22 + 11) is None  # above pid_max's default: no such process


def _opened(folder: Path):  # type: ignore[no-untyped-def]
    from agent_tty_plugins.linux_cgroup import OpenedPath

    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    return OpenedPath(fd, os.fstat(fd).st_dev)


def test_a_symlink_is_never_entered(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "cgroup.procs").write_text("1\n")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "file-link").symlink_to(tmp_path / "real" / "cgroup.procs")
    with _opened(tmp_path) as opened:
        opened.enter("real", owned=True)
        assert (opened / "cgroup.procs").read_text() == "1\n"
        with pytest.raises(OSError):
            (opened / "file-link").read_text()  # O_NOFOLLOW on the files too
        opened.leave()
        with pytest.raises(OSError):
            opened.enter("link", owned=False)
        assert opened.names == [""]


def test_another_file_system_is_never_entered() -> None:
    from agent_tty_plugins.linux_cgroup import NotOurs

    if os.stat("/").st_dev == os.stat("/proc").st_dev:
        pytest.skip("/proc is not a mount of its own here")
    with _opened(Path("/")) as opened:
        with pytest.raises(NotOurs):
            opened.enter("proc", owned=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a folder to another uid")
def test_a_folder_of_another_uid_is_never_ours(tmp_path: Path) -> None:
    from agent_tty_plugins.linux_cgroup import NotOurs

    (tmp_path / "theirs").mkdir()
    os.chown(tmp_path / "theirs", 65534, 65534)
    with _opened(tmp_path) as opened:
        opened.enter("theirs", owned=False)  # a folder above our own ones may be anyone's
        opened.leave()
        with pytest.raises(NotOurs):
            opened.enter("theirs", owned=True)
