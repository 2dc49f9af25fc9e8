"""A file the user names with `--out`: written whole or not at all, never through a link.

The name may sit in a folder others write to (/tmp). A link planted there must not carry the
export into a file it points at (that would bypass `fs.protected_symlinks`), and a device, FIFO
or socket at the name must neither block the call nor be renamed over. So the folder is opened
once, the name is looked at without following it (absent or a regular file, else refused), the
bytes go to a new temp name beside it (O_EXCL, O_NOFOLLOW) with the mode the caller's umask
gives, and a rename puts them at the name: a rename replaces a link that appeared since the look,
never what it points at. The folders on the way to the name are the user's choice and followed.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path

from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.storage import fs
from agent_tty.storage.files import write_chunks

_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _refused(target: Path, why: str) -> AgentTtyError:
    return AgentTtyError(
        ErrorCode.EXPORT_FAILED,
        f"cannot write {target}: {why}; --out writes a regular file (a new name, or a file to replace)",
        path=str(target),
    )


def _kind(info: os.stat_result) -> str | None:
    """What stands at the name, when it is not a regular file we may replace."""
    if fs.is_link(info):
        return "a symbolic link"
    for test, kind in _KINDS:
        if test(info.st_mode):
            return kind
    return None if stat.S_ISREG(info.st_mode) else "not a regular file"


def _check_name(folder: fs.Folder, name: str, target: Path) -> None:
    try:
        info = folder.lstat(name)
    except FileNotFoundError:
        return
    kind = _kind(info)
    if kind is not None:
        raise _refused(target, f"it is {kind}")


def write_out(out: str, chunks: Iterable[bytes]) -> tuple[Path, str, int]:
    """Write `chunks` to the file `out` names: its path, sha256 and size. EXPORT_FAILED when
    the name is anything but absent or a regular file, or the folder is missing or unwritable.
    An exception from `chunks` leaves nothing behind."""
    given = Path(out)
    name = given.name
    if not out or not name or name in (".", "..") or out.endswith(("/", os.sep)):
        raise _refused(given, "it names a folder")
    parent = Path(os.path.realpath(given.parent))
    target = parent / name
    try:
        folder = fs.Folder(parent)
    except FileNotFoundError:
        raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"cannot write {target}: no such folder", path=str(target)) from None
    except OSError as err:
        raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"cannot write {target}: {err.strerror or err}", path=str(target)) from None
    with folder:
        _check_name(folder, name, target)
        temp = f".{name[:180]}.{os.getpid()}.{secrets.token_hex(4)}.part"
        try:
            fd = folder.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError as err:
            raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"cannot write {target}: {err.strerror or err}", path=str(target)) from None
        try:
            try:
                sha256, size = write_chunks(fd, chunks)
            finally:
                os.close(fd)
            _check_name(folder, name, target)  # again: a special file made while we wrote
            folder.replace(temp, name)
        except BaseException as err:
            try:
                folder.unlink(temp)
            except OSError:
                pass
            if isinstance(err, OSError):
                why = "no space left on the device" if err.errno == errno.ENOSPC else (err.strerror or str(err))
                raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"cannot write {target}: {why}", path=str(target)) from None
            raise
    return target, sha256, size
