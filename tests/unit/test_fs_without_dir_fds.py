"""storage/fs.py where opens cannot refuse a link and folders do not open as fds (Windows).

The after-the-fact check is plain os calls, so it runs here on real files and real links: a
System without dir_fds stands in for Windows's, its open following links as Windows's does.
Each refusal below is what a plain open would have let through."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from agent_tty.platform.system import PosixSystem, System
from agent_tty.storage import files, fs, segments
from agent_tty.storage.records import Failure


class NoDirFds(PosixSystem):
    """This machine, with Windows's file-system limits: os.open follows links, no dir_fd."""

    dir_fds = False

    def open_file(self, path: str, flags: int, mode: int) -> int:
        return System.open_file(self, path, flags, mode)


class SwapsAfterOpen(NoDirFds):
    """Another process turns the name back into a plain file right after our open followed a
    link: the one order that an open-then-look check must still catch."""

    def open_file(self, path: str, flags: int, mode: int) -> int:
        fd = super().open_file(path, flags, mode)
        if os.path.islink(path):
            os.unlink(path)
            Path(path).write_bytes(b"planted\n")
        return fd


class RenamedOverAtEachOpen(NoDirFds):
    """A writer renames a new record over the name right after each of our opens (atomic
    writes, one after another): never a link, only never the file opened."""

    def open_file(self, path: str, flags: int, mode: int) -> int:
        fd = super().open_file(path, flags, mode)
        fresh = f"{path}.new"
        Path(fresh).write_bytes(b"newer\n")
        os.replace(fresh, path)
        return fd


@pytest.fixture
def no_dir_fds(monkeypatch: pytest.MonkeyPatch) -> NoDirFds:
    system = NoDirFds()
    monkeypatch.setattr(fs, "current", lambda: system)
    return system


def test_a_plain_file_opens(tmp_path: Path, no_dir_fds: NoDirFds) -> None:
    (tmp_path / "record").write_bytes(b"data")
    fd = fs.open_file(tmp_path / "record", os.O_RDONLY)
    try:
        assert os.read(fd, 10) == b"data"
    finally:
        os.close(fd)


def test_a_link_is_refused_and_what_it_names_is_untouched(tmp_path: Path, no_dir_fds: NoDirFds) -> None:
    secret = tmp_path / "elsewhere"
    secret.write_bytes(b"not the Home's")
    (tmp_path / "record").symlink_to(secret)
    for flags in (os.O_RDONLY, os.O_WRONLY | os.O_CREAT | os.O_APPEND):
        with pytest.raises(OSError) as caught:
            fs.open_file(tmp_path / "record", flags)
        assert caught.value.errno == errno.ELOOP
    assert secret.read_bytes() == b"not the Home's"


def test_what_a_link_named_is_never_handed_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fs, "current", SwapsAfterOpen)
    secret = tmp_path / "elsewhere"
    secret.write_bytes(b"not the Home's")
    (tmp_path / "record").symlink_to(secret)
    # The first open followed the link; the name is a plain file when looked at: that fd is
    # dropped, and the open taken again reaches the plain file.
    fd = fs.open_file(tmp_path / "record", os.O_RDONLY)
    try:
        assert os.read(fd, 100) == b"planted\n"
    finally:
        os.close(fd)


def test_a_record_renamed_over_during_the_open_is_opened_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "record").write_bytes(b"first\n")
    calls = []

    class OnceRenamedOver(RenamedOverAtEachOpen):
        def open_file(self, path: str, flags: int, mode: int) -> int:
            calls.append(path)
            if len(calls) > 1:
                return NoDirFds.open_file(self, path, flags, mode)
            return super().open_file(path, flags, mode)

    monkeypatch.setattr(fs, "current", OnceRenamedOver)
    fd = fs.open_file(tmp_path / "record", os.O_RDONLY)
    try:
        assert os.read(fd, 100) == b"newer\n" and len(calls) == 2
    finally:
        os.close(fd)
    monkeypatch.setattr(fs, "current", RenamedOverAtEachOpen)
    with pytest.raises(OSError) as caught:  # renamed over at every try: given up, never wrong
        fs.open_file(tmp_path / "record", os.O_RDONLY)
    assert caught.value.errno == errno.ELOOP


def test_records_write_and_read_back(tmp_path: Path, no_dir_fds: NoDirFds) -> None:
    failure = Failure(reason="host-death", message="first")
    files.write_record(tmp_path / "failure.json", failure)
    files.write_record(tmp_path / "failure.json", failure.replace(message="second"))
    assert files.read_record(tmp_path / "failure.json", Failure).message == "second"
    assert [name for name in os.listdir(tmp_path) if name.endswith(".tmp")] == []


def test_a_record_that_is_a_link_reads_as_a_storage_error(tmp_path: Path, no_dir_fds: NoDirFds) -> None:
    from agent_tty.protocol.errors import AgentTtyError

    files.write_record(tmp_path / "real.json", Failure(reason="host-death", message="m"))
    (tmp_path / "failure.json").symlink_to(tmp_path / "real.json")
    with pytest.raises(AgentTtyError) as caught:
        files.read_record(tmp_path / "failure.json", Failure)
    assert caught.value.code.value == "STORAGE_ERROR" and caught.value.details["errno"] == "ELOOP"


def test_a_folder_that_is_a_link_does_not_open(tmp_path: Path, no_dir_fds: NoDirFds) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "folder").symlink_to(tmp_path / "real")
    with pytest.raises(OSError) as caught:
        fs.Folder(tmp_path / "folder")
    assert caught.value.errno == errno.ELOOP
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(NotADirectoryError):
        fs.Folder(tmp_path / "file")
    with pytest.raises(FileNotFoundError):
        fs.Folder(tmp_path / "gone")


def test_a_folder_removal_never_leaves_the_home(tmp_path: Path, no_dir_fds: NoDirFds) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_bytes(b"kept")
    sessions = tmp_path / "sessions"
    (sessions / "abc" / "inner").mkdir(parents=True)
    (sessions / "abc" / "inner" / "escape").symlink_to(outside)
    (sessions / "linked").symlink_to(outside)
    files.remove_session_folder(sessions, "abc")
    assert not (sessions / "abc").exists()
    with pytest.raises(OSError) as caught:
        files.remove_session_folder(sessions, "linked")
    assert caught.value.errno == errno.ELOOP
    assert (outside / "keep").read_bytes() == b"kept"
    with pytest.raises(ValueError):
        fs.Folder(sessions).rmtree("../outside")


def test_the_log_rotates_through_a_folder_path(tmp_path: Path, no_dir_fds: NoDirFds) -> None:
    (tmp_path / "events.jsonl").write_bytes(b"old\n")
    with segments.open_folder(tmp_path) as folder:
        assert folder.fd is None
        fd = segments.write_next(folder, [b"new\n"])
        os.close(fd)
        segments.swap_in_next(folder, 7)
        assert (tmp_path / "events.jsonl").read_bytes() == b"new\n"
        assert (tmp_path / "events.7.jsonl").read_bytes() == b"old\n"
        (tmp_path / "events.3.jsonl").write_bytes(b"older\n")
        segments.prune(folder, 1)
    assert sorted(os.listdir(tmp_path)) == ["events.7.jsonl", "events.jsonl"]
    assert segments.log_files(tmp_path) == [tmp_path / "events.7.jsonl", tmp_path / "events.jsonl"]


def test_a_linked_log_gets_no_second_name(tmp_path: Path, no_dir_fds: NoDirFds) -> None:
    (tmp_path / "elsewhere").write_bytes(b"not ours\n")
    (tmp_path / "events.jsonl").symlink_to(tmp_path / "elsewhere")
    with segments.open_folder(tmp_path) as folder:
        with pytest.raises(OSError) as caught:
            folder.link("events.jsonl", "events.1.jsonl")
    assert caught.value.errno == errno.ELOOP
    assert not (tmp_path / "events.1.jsonl").exists()
