"""The file-system steps that must never follow a link, in the form each system allows.

Storage opens, renames and removes only through here. On POSIX an open carries O_NOFOLLOW and a
step inside a folder goes through the folder's fd (dir_fd), so a component swapped for a link
after a check can never redirect it. Windows has neither: os.open follows reparse points, and
no folder opens as an fd. There the same promise rests on two things: the Home's folders let no
other user change them (storage/trust.py), and every open is checked after the fact: the name,
looked at without following it, is no link and names the very file the descriptor holds (same
device and file number). A name that a writer renamed another plain file over meanwhile is
opened again; a link, at the name or in the descriptor, is refused as O_NOFOLLOW would.
docs/adr/0022-storage-without-descriptor-folders.md says why, and what it costs.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from agent_tty.platform.system import current

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command ~2 ms at start-up (issue 26)
    from typing import Self

_REPARSE_POINT = getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0x400)


OPEN_TRIES = 3
"""Opens of a name that a writer renamed a new file over meanwhile (a record's atomic write):
the name is a plain file each time, only not the one opened. A link is refused at once."""


def open_file(path: Path | str, flags: int, mode: int = 0o600) -> int:
    """An fd for `path` that was not reached through a link (OSError otherwise: ELOOP for a
    link, FileNotFoundError when it is gone)."""
    system = current()
    if system.dir_fds:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    for _ in range(OPEN_TRIES):
        fd = system.open_file(str(path), flags, mode)
        try:
            if is_named_file(path, fd):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise OSError(errno.ELOOP, f"its name named another file at each of {OPEN_TRIES} opens", str(path))


def is_named_file(path: Path | str, fd: int) -> bool:
    """Whether `path`, not followed, is a plain entry naming the file `fd` holds. ELOOP when
    either is a link (the open took a link, or one stands at the name now); False when the name
    is a plain file but another one (renamed over it since the open)."""
    held = os.fstat(fd)
    named = os.lstat(path)
    if is_link(held) or is_link(named):
        raise OSError(errno.ELOOP, "a link", str(path))
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def is_link(info: os.stat_result) -> bool:
    """A symbolic link, or on Windows any reparse point (a junction is one too)."""
    return stat.S_ISLNK(info.st_mode) or bool(getattr(info, "st_file_attributes", 0) & _REPARSE_POINT)


def replace(source: Path | str, target: Path | str) -> None:
    """Rename over an existing name in the same folder (os.rename refuses that on Windows,
    whose rename of its own keeps a reader of the old file from blocking it)."""
    system = current()
    if system.dir_fds:
        os.replace(source, target)
    else:
        system.replace(str(source), str(target))


class Folder:
    """A folder of the Home to act inside, opened once without following a link.

    POSIX: every step goes through the folder's fd. Elsewhere: through its path, which was
    checked to be a real folder, not a link, when this object was made. FileNotFoundError
    (or NotADirectoryError) when it is gone."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.fd: int | None = None
        if current().dir_fds:
            self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            return
        info = os.lstat(self.path)
        if is_link(info):
            raise OSError(errno.ELOOP, "a link, not a folder", str(self.path))
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(self.path))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)

    def stat(self) -> os.stat_result:
        """The folder itself (the one we hold on POSIX)."""
        return os.fstat(self.fd) if self.fd is not None else os.lstat(self.path)

    def _name(self, name: str) -> str:
        if not name or os.sep in name or (os.altsep and os.altsep in name) or name in (".", ".."):
            raise ValueError(f"not a name inside a folder: {name!r}")  # a bug, never input
        return str(self.path / name)

    def open(self, name: str, flags: int, mode: int = 0o600) -> int:
        if self.fd is not None:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=self.fd)
        return open_file(self._name(name), flags, mode)

    def lstat(self, name: str) -> os.stat_result:
        if self.fd is not None:
            return os.lstat(name, dir_fd=self.fd)
        return os.lstat(self._name(name))

    def unlink(self, name: str) -> None:
        if self.fd is not None:
            os.unlink(name, dir_fd=self.fd)
        else:
            os.unlink(self._name(name))

    def link(self, source: str, target: str) -> None:
        """A second name for a file (never for what a link points at)."""
        if self.fd is not None:
            os.link(source, target, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)
            return
        if is_link(self.lstat(source)):
            raise OSError(errno.ELOOP, "a link", self._name(source))
        os.link(self._name(source), self._name(target))

    def replace(self, source: str, target: str) -> None:
        if self.fd is not None:
            os.rename(source, target, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        else:
            replace(self._name(source), self._name(target))

    def listdir(self) -> list[str]:
        return os.listdir(self.fd if self.fd is not None else self.path)

    def sync(self) -> None:
        """The new names outlive a crash (POSIX; Windows's NTFS journals them itself)."""
        if self.fd is not None:
            os.fsync(self.fd)

    def rmtree(self, name: str) -> None:
        """Remove a folder inside this one, never following a link out of it."""
        import shutil

        if self.fd is not None:
            shutil.rmtree(name, dir_fd=self.fd)
            return
        path = self._name(name)
        if is_link(os.lstat(path)):
            raise OSError(errno.ELOOP, "a link, not a folder", path)
        shutil.rmtree(path)  # it unlinks a link or junction inside, never enters it
