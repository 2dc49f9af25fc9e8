"""The storage layer's Windows path on Windows's own calls (platform/win32_files.py): the user's
SID, a private Home folder and its judged DACL, owned files, and opens that share deletion and
never follow a link. Skipped everywhere but win32: scripts/test-wine runs it under Wine, the
platforms workflow on a Windows runner (docs/adr/0022, 0023)."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "win32", reason="Windows's own calls (scripts/test-wine, the Windows runner)")
UNDER_WINE = os.environ.get("AGENT_TTY_UNDER_WINE") == "1"
"""Set by scripts/test-wine: where Wine 8 answers otherwise than Windows, the test says which."""


def test_the_user_is_a_sid_and_a_private_folder_is_judged_private(tmp_path: Path) -> None:
    from agent_tty.platform import win32_files
    from agent_tty.platform.system import current

    me = current().user()
    assert isinstance(me, str) and me.startswith("S-1-5-") and me == win32_files.user_sid()
    home = tmp_path / "home"
    current().mkdir_private(str(home))
    judged = current().access(str(home), os.lstat(home))
    assert judged.owner == me, judged
    assert not (judged.others_write or judged.others_read or judged.others_rename), judged
    assert judged.shown.startswith(f"O:{me}"), judged.shown
    if not UNDER_WINE:  # Wine shows a DACL made from the Unix mode, not the one we gave
        assert "D:P" in judged.shown and "(A;OICI;FA;;;BA)" in judged.shown, judged.shown
    with pytest.raises(FileExistsError):
        current().mkdir_private(str(home))


def _posix_rename_or_skip(folder: Path) -> None:
    """Skip where the system has no rename with POSIX semantics (Wine 8): there a name held
    open by a reader cannot be replaced, and the writer's retry is all there is."""
    from agent_tty.platform import win32_files
    from agent_tty.storage import fs

    (folder / "probe.a").write_bytes(b"a")
    (folder / "probe.b").write_bytes(b"b")
    reader = fs.open_file(folder / "probe.b", os.O_RDONLY)  # shared for deletion, as storage reads
    try:
        win32_files.replace(str(folder / "probe.a"), str(folder / "probe.b"))
    except PermissionError:
        if UNDER_WINE:
            pytest.skip("Wine 8 has no rename with POSIX semantics (FileRenameInfoEx)")
        raise
    finally:
        os.close(reader)


def test_a_file_we_create_is_ours_and_is_created_once(tmp_path: Path) -> None:
    from agent_tty.platform.system import current
    from agent_tty.storage import fs

    path = tmp_path / "record.json"
    fd = fs.open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        os.write(fd, b"one\n")  # binary: no newline translation
        assert current().fd_owner(fd, os.fstat(fd)) == current().user()
    finally:
        os.close(fd)
    assert path.read_bytes() == b"one\n"
    with pytest.raises(FileExistsError):
        fs.open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)


def test_a_record_is_replaced_while_a_reader_holds_it(tmp_path: Path) -> None:
    from agent_tty.storage import files
    from agent_tty.storage.records import Failure

    path = tmp_path / "failure.json"
    files.write_record(path, Failure(reason="host-death", message="first"))
    _posix_rename_or_skip(tmp_path)
    with files.open_stream(path) as reader:  # shared for deletion: the rename below may proceed
        files.write_record(path, Failure(reason="host-death", message="second"))
        assert b"first" in reader.read()
    assert files.read_record(path, Failure).message == "second"


def test_the_log_rotates_while_the_host_holds_it_open(tmp_path: Path) -> None:
    from agent_tty.storage import fs, segments

    _posix_rename_or_skip(tmp_path)
    log = fs.open_file(tmp_path / "events.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        os.write(log, b"old\n")
        with segments.open_folder(tmp_path) as folder:
            fd = segments.write_next(folder, [b"new\n"])
            os.close(fd)
            segments.swap_in_next(folder, 1)
    finally:
        os.close(log)
    assert (tmp_path / "events.jsonl").read_bytes() == b"new\n"
    assert (tmp_path / "events.1.jsonl").read_bytes() == b"old\n"


def test_a_link_is_never_opened(tmp_path: Path) -> None:
    from agent_tty.storage import fs

    target = tmp_path / "elsewhere"
    target.write_bytes(b"not the Home's")
    try:
        os.symlink(target, tmp_path / "record")
    except OSError as err:
        pytest.skip(f"this account may not make links: {err}")
    with pytest.raises(OSError) as caught:
        fs.open_file(tmp_path / "record", os.O_RDONLY)
    # Windows opens the link itself, which fs refuses; Wine 8 cannot open a link as itself.
    assert caught.value.errno == errno.ELOOP or (UNDER_WINE and isinstance(caught.value, FileNotFoundError)), caught.value
    assert target.read_bytes() == b"not the Home's"


def test_a_home_agent_tty_makes_is_trusted(tmp_path: Path) -> None:
    from agent_tty.storage.home import Home
    from agent_tty.storage.trust import check_home

    home = Home(tmp_path / "home")
    home.ensure()
    assert check_home(home.root) is True
