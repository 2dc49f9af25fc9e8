"""Reads and atomic writes of records. A write never creates a folder (R10)."""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path
from typing import TypeVar

from agent_tty.protocol.errors import AgentTtyError, ErrorCode, storage_error
from agent_tty.storage.schema import Record, RecordError

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
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileNotFoundError:
        raise FolderGone(path) from None
    except OSError as err:
        raise storage_error(f"cannot write {path}: {err.strerror}", str(path)) from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, path)
    except BaseException as err:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(err, FileNotFoundError):
            raise FolderGone(path) from None
        if isinstance(err, OSError):
            raise storage_error(f"cannot write {path}: {err.strerror}", str(path)) from None
        raise


def write_record(path: Path, record: Record) -> None:
    write_atomic(path, record.to_json().encode() + b"\n")


def read_bytes(path: Path) -> bytes:
    """The file's bytes; FileNotFoundError passes through, other errors are STORAGE_ERROR."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise
    except NotADirectoryError:
        raise FileNotFoundError(str(path)) from None
    except OSError as err:
        code = errno.errorcode.get(err.errno or 0)
        raise storage_error(f"cannot read {path}: {err.strerror}", str(path), errno=code) from None


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
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except FileNotFoundError:
        raise FolderGone(path) from None
    except OSError as err:
        raise storage_error(f"cannot write {path}: {err.strerror}", str(path)) from None
    os.close(fd)


def exists(path: Path) -> bool:
    return os.path.lexists(path)
