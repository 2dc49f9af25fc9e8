"""Reads and atomic writes of records. A write never creates a folder (R10)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from agent_tty.platform.system import current
from agent_tty.storage import fs
from agent_tty.protocol.errors import AgentTtyError, ErrorCode, storage_error
from agent_tty.storage.schema import Record, RecordError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command ~2 ms at start-up (issue 26)
    from typing import BinaryIO, TypeVar

    R = TypeVar("R", bound=Record)


class FolderGone(AgentTtyError):
    """The session folder was removed (by gc) before or during the write."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            ErrorCode.SESSION_NOT_FOUND,
            f"session folder {path.parent} was removed",
            sessionId=path.parent.name,
            path=str(path),
        )


def write_atomic(path: Path, data: bytes) -> None:
    """Temp file in the same folder, fsync, rename: readers see the old or the new record.

    No mkdir: when gc removed the folder, the write fails with FolderGone instead of
    bringing back a folder that holds only this file (ManifestWriteNeedsFolder).
    """
    temp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        fd = fs.open_file(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileNotFoundError:
        raise FolderGone(path) from None
    except OSError as err:
        raise _write_error(path, err) from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        fs.replace(temp, path)
    except BaseException as err:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(err, FileNotFoundError):
            raise FolderGone(path) from None
        if isinstance(err, OSError):
            raise _write_error(path, err) from None
        raise


def write_atomic_chunks(path: Path, chunks: Iterable[bytes], mode: int = 0o600) -> tuple[str, int]:
    """write_atomic of bytes made while they are written (an export larger than memory should
    hold): their sha256 and size. An exception from `chunks` leaves no temp file and no `path`.
    A copy of write_atomic's steps rather than its base: the lifecycle model covers that one."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.part")
    try:
        fd = fs.open_file(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileNotFoundError:
        raise FolderGone(path) from None
    except OSError as err:
        raise _write_error(path, err) from None
    try:
        try:
            sha256, size = write_chunks(fd, chunks)
        finally:
            os.close(fd)
        fs.replace(temp, path)
    except BaseException as err:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(err, FileNotFoundError):
            raise FolderGone(path) from None
        if isinstance(err, OSError):
            raise _write_error(path, err) from None
        raise
    return sha256, size


def write_chunks(fd: int, chunks: Iterable[bytes]) -> tuple[str, int]:
    """Write every chunk whole to `fd`, then fsync: their sha256 and size."""
    import hashlib

    digest, size = hashlib.sha256(), 0
    for data in chunks:
        digest.update(data)
        size += len(data)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    os.fsync(fd)
    return digest.hexdigest(), size


def write_record(path: Path, record: Record) -> None:
    write_atomic(path, record.to_json().encode() + b"\n")


READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
"""With fs.open_file's refusal of links: a FIFO or device never blocks the read."""


def read_bytes(path: Path) -> bytes:
    """A record's bytes: a regular file of ours, opened without following a link.
    FileNotFoundError passes through; anything else is a STORAGE_ERROR with its errno."""
    fd, size = _open_checked(path)
    try:
        # Straight from the fd: a file object (and its 1 MiB buffer) costs a record read ~5 us,
        # ~1 ms of a list of 100 sessions (issue 26).
        # One read past the size fstat gave: shorter than asked is the end of a regular file (a
        # record is renamed into place whole), so no second read for EOF.
        want = max(size + 1, 4096)
        chunks = []
        while True:
            chunk = os.read(fd, want)
            chunks.append(chunk)
            if len(chunk) < want:
                return b"".join(chunks)
    except OSError as err:
        raise _read_error(path, err.errno or 0, err.strerror or str(err)) from None
    finally:
        os.close(fd)


def open_stream(path: Path) -> BinaryIO:
    """A record to read a piece at a time (an event log larger than memory should hold), with
    read_bytes's checks: FileNotFoundError passes through, anything else is a STORAGE_ERROR."""
    fd, _size = _open_checked(path)
    return os.fdopen(fd, "rb", buffering=1 << 20)


def _open_checked(path: Path) -> tuple[int, int]:
    """An fd of a regular file of ours at `path`, not reached through a link, and its size."""
    try:
        fd = fs.open_file(path, READ_FLAGS)
    except FileNotFoundError:
        raise
    except NotADirectoryError:
        raise FileNotFoundError(str(path)) from None
    except OSError as err:
        raise _read_error(path, err.errno or 0, err.strerror or str(err)) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _read_error(path, errno.EISDIR, "Is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise _read_error(path, errno.EINVAL, "not a regular file")
        system = current()
        owner = system.fd_owner(fd, info)
        if owner != system.user():
            # Another user's file in our folder proves nothing we may act on.
            raise _read_error(path, errno.EPERM, f"owned by {'uid ' if isinstance(owner, int) else ''}{owner}, not by us")
    except BaseException as err:
        os.close(fd)
        if isinstance(err, OSError):
            raise _read_error(path, err.errno or 0, err.strerror or str(err)) from None
        raise
    return fd, info.st_size


def _write_error(path: Path, err: OSError) -> AgentTtyError:
    return storage_error(f"cannot write {path}: {err.strerror}", str(path), errno=errno.errorcode.get(err.errno or 0))


def _read_error(path: Path, number: int, why: str) -> AgentTtyError:
    code = errno.errorcode.get(number)
    return storage_error(f"cannot read {path}: {why}", str(path), errno=code)


def read_record(path: Path, kind: type[R]) -> R:
    """Parse and check a record; a bad one is a STORAGE_ERROR that names the file."""
    data = read_bytes(path)
    try:
        return kind.from_json(data, str(path))
    except RecordError as err:
        raise storage_error(str(err), str(path)) from None


def read_optional(path: Path, kind: type[R]) -> R | None:
    try:
        return read_record(path, kind)
    except FileNotFoundError:
        return None


def write_marker(path: Path) -> None:
    """An empty marker file, created without creating its folder."""
    try:
        fd = fs.open_file(path, os.O_WRONLY | os.O_CREAT)
    except FileNotFoundError:
        raise FolderGone(path) from None
    except OSError as err:
        raise _write_error(path, err) from None
    os.close(fd)


def exists(path: Path) -> bool:
    return os.path.lexists(path)


def remove_session_folder(sessions: Path, session_id: str) -> None:
    """Remove sessions/<id> inside a checked `sessions/` (through its fd on POSIX): a component
    swapped for a link after our checks can never redirect the removal outside the Home.
    FileNotFoundError when it is already gone; other OSErrors pass through."""
    from agent_tty.storage.trust import owned_folder

    with fs.Folder(sessions) as folder:
        owned_folder(str(sessions), folder.stat(), "the Home's sessions folder")
        folder.rmtree(session_id)
