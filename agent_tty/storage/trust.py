"""The Home is a trust boundary: only folders and files that no other user can change are obeyed.

A record is data another process wrote. When that process may be another user (a shared or
world-writable Home, or root running on a user's Home), every path, pid and proof in it is an
attacker's choice. So before any command reads a record we check what tmux checks for its socket
folder and ssh for its key files: the Home, its `sessions/` and every session folder are ours and
writable by no one else, and every folder above the Home lets no one else rename what it holds
(owned by root or us, and not writable by others unless sticky like /tmp). Under such a chain a
path means the same thing from our check to our use: no other user can swap a component.
docs/adr/0008-the-home-is-a-trust-boundary.md says why, and what root does.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agent_tty.platform.system import current
from agent_tty.protocol.errors import AgentTtyError, ErrorCode

OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
PRIVATE = stat.S_IRWXG | stat.S_IRWXO


class UnsafeHome(AgentTtyError):
    """A folder of the Home (or above it) that another user could change: refused, touched never."""

    def __init__(self, path: str, info: os.stat_result | None, problem: str, why: str) -> None:
        owner = info.st_uid if info is not None else None
        mode = f"{stat.S_IMODE(info.st_mode):04o}" if info is not None else None
        super().__init__(
            ErrorCode.UNSAFE_HOME,
            f"refusing {path}: {why}{_fix(path, info, problem)}",
            path=path,
            owner=owner,
            mode=mode,
            problem=problem,
        )


def _user(uid: int) -> str:
    name = _user_name(uid)
    return f"uid {uid}" if name == str(uid) else f"{name} (uid {uid})"


def _fix(path: str, info: os.stat_result | None, problem: str) -> str:
    if problem == "writable":
        return f"; fix it with `chmod go-w {path}` or use a private Home (--home)"
    if problem == "owner" and info is not None and current().is_admin():
        return f"; run the command as its owner (`runuser -u {_user_name(info.st_uid)} -- agent-tty ...`) or add --as-owner"
    if problem in ("owner", "ancestor"):
        return "; use a Home of your own (--home, $AGENT_TTY_HOME, default ~/.agent-tty)"
    return ""


def _user_name(uid: int) -> str:
    return current().user_name(uid)


def owned_folder(path: str, info: os.stat_result, what: str, private: bool = False) -> None:
    """A folder of ours: a real directory, owned by our effective uid, writable by us alone
    (and, for `private`, not even readable by others)."""
    if not stat.S_ISDIR(info.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a directory"
        raise UnsafeHome(path, info, "not-a-directory", f"{what} is {kind}")
    if info.st_uid != current().user():
        raise UnsafeHome(path, info, "owner", f"{what} belongs to {_user(info.st_uid)}, not to {_user(current().user())}")
    if info.st_mode & (PRIVATE if private else OTHERS_WRITE):
        raise UnsafeHome(
            path, info, "writable", f"{what} has mode {stat.S_IMODE(info.st_mode):04o}: other users could change it"
        )


def check_ancestors(path: str) -> None:
    """Every folder above `path` (a real path) keeps its entries: owned by root or us, and
    writable by others only with the sticky bit (where nobody may rename another's entry)."""
    me = current().user()
    parent = os.path.dirname(path)
    while True:
        try:
            info = os.stat(parent)
        except OSError as err:
            raise AgentTtyError(ErrorCode.STORAGE_ERROR, f"cannot check {parent}: {err.strerror}", path=parent) from None
        if info.st_uid not in (0, me):
            raise UnsafeHome(parent, info, "ancestor", f"the folder {parent} above the Home belongs to {_user(info.st_uid)}")
        if info.st_mode & OTHERS_WRITE and not info.st_mode & stat.S_ISVTX:
            raise UnsafeHome(
                parent, info, "ancestor",
                f"the folder {parent} above the Home has mode {stat.S_IMODE(info.st_mode):04o}: other users could swap the Home",
            )
        if parent == os.path.dirname(parent):
            return
        parent = os.path.dirname(parent)


def check_home(root: Path) -> bool:
    """Check a Home's root, `sessions/` and the folders above it; False when it does not exist."""
    text = str(root)
    try:
        info = os.lstat(text)
    except FileNotFoundError:
        check_ancestors(text)
        return False
    except OSError as err:
        raise AgentTtyError(ErrorCode.STORAGE_ERROR, f"cannot check {text}: {err.strerror}", path=text) from None
    owned_folder(text, info, "the Home")  # first: "not yours" is the answer root on ~bob needs
    check_ancestors(text)
    sessions = os.path.join(text, "sessions")
    try:
        owned_folder(sessions, os.lstat(sessions), "the Home's sessions folder")
    except FileNotFoundError:
        pass
    return True


def check_session_folder(folder: Path) -> None:
    """A session folder is a real directory of ours (it may be gone: the caller's read says so)."""
    try:
        info = os.lstat(folder)
    except OSError:
        return
    owned_folder(str(folder), info, "the session folder")


def real_home(path: str) -> Path:
    """The Home's real path: every later operation uses it, so a link above it that someone
    else controls cannot redirect them (the check covers the folders of the real path)."""
    return Path(os.path.realpath(path))


def become_owner(root: Path) -> None:
    """--as-owner: root acts on another user's Home as that user, for the whole command, so no
    record in it can make us do what its owner could not (ADR 0008)."""
    try:
        info = os.stat(root)
    except OSError as err:
        raise AgentTtyError(ErrorCode.STORAGE_ERROR, f"cannot check {root}: {err.strerror}", path=str(root)) from None
    if info.st_uid == current().user():
        return
    if not current().is_admin():
        raise UnsafeHome(str(root), info, "owner", f"--as-owner needs root: the Home belongs to {_user(info.st_uid)}")
    uid = info.st_uid
    import json  # noqa: F401  (the error envelope must print even if the drop leaves it unreadable)

    current().become(uid, info.st_gid)
    if os.environ.get("XDG_RUNTIME_DIR"):
        # root's runtime folder is not the owner's: the socket folder check would refuse it.
        os.environ.pop("XDG_RUNTIME_DIR")
    _check_installation_readable(uid)


def _check_installation_readable(uid: int) -> None:
    """The rest of the command imports lazily: stop before acting if, as the owner, we can no
    longer read the interpreter's library or our own package (an install under /root)."""
    import agent_tty

    for folder in (os.path.dirname(os.__file__), os.path.dirname(os.path.dirname(agent_tty.__file__))):
        try:
            os.listdir(folder)
        except OSError as err:
            raise AgentTtyError(
                ErrorCode.STORAGE_ERROR,
                f"--as-owner: {_user(uid)} cannot read {folder} ({err.strerror}), so this installation cannot "
                f"act as that user; run the user's own agent-tty (`runuser -u {_user_name(uid)} -- agent-tty ...`)",
                path=folder,
            ) from None
