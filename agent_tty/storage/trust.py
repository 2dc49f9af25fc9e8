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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_tty.platform.access import Access, UserId


class UnsafeHome(AgentTtyError):
    """A folder of the Home (or above it) that another user could change: refused, touched never."""

    def __init__(self, path: str, access: Access | None, problem: str, why: str) -> None:
        super().__init__(
            ErrorCode.UNSAFE_HOME,
            f"refusing {path}: {why}{_fix(path, access, problem)}",
            path=path,
            owner=access.owner if access is not None else None,
            mode=access.shown if access is not None else None,
            problem=problem,
        )


def _user(user: UserId) -> str:
    name = _user_name(user)
    label = "uid" if isinstance(user, int) else "SID"
    return f"{label} {user}" if name == str(user) else f"{name} ({label} {user})"


def _fix(path: str, access: Access | None, problem: str) -> str:
    if problem == "writable":
        # Never a hint to change a folder others share (sticky /tmp, another user's): an agent
        # follows hints literally.
        if access is not None and access.owner == current().user() and access.others_rename:
            return f"; {current().fix_writable(path)}"
        return "; it is a shared folder: use a new folder of your own as the Home (--home DIR, $AGENT_TTY_HOME; default ~/.agent-tty)"
    if problem == "owner" and access is not None and current().is_admin():
        return f"; run the command as its owner (`runuser -u {_user_name(access.owner)} -- agent-tty ...`) or add --as-owner"
    if problem in ("owner", "ancestor"):
        return "; use a Home of your own (--home, $AGENT_TTY_HOME, default ~/.agent-tty)"
    return ""


def _user_name(user: UserId) -> str:
    return current().user_name(user)


def owned_folder(path: str, info: os.stat_result, what: str, private: bool = False) -> None:
    """A folder of ours: a real directory (`info` is its lstat), owned by our user, writable by
    us alone (and, for `private`, not even readable by others)."""
    from agent_tty.storage.fs import is_link

    system = current()
    try:
        access = system.access(path, info)
    except FileNotFoundError:
        raise  # gone since its lstat: the caller says what that means
    except OSError as err:
        raise AgentTtyError(ErrorCode.STORAGE_ERROR, f"cannot check {path}: {err.strerror}", path=path) from None
    if is_link(info) or not stat.S_ISDIR(info.st_mode):
        kind = "a symbolic link" if is_link(info) else "not a directory"
        raise UnsafeHome(path, access, "not-a-directory", f"{what} is {kind}")
    if access.owner != system.user():
        raise UnsafeHome(path, access, "owner", f"{what} belongs to {_user(access.owner)}, not to {_user(system.user())}")
    if access.others_write or (private and access.others_read):
        raise UnsafeHome(path, access, "writable", f"{what} has mode {access.shown}: other users could change it")


def check_ancestors(path: str) -> None:
    """Every folder above `path` (a real path) keeps its entries: owned by root (or Windows's
    system accounts) or us, and letting no one else rename what it holds (others may write to
    /tmp, whose sticky bit keeps them from renaming another's entry)."""
    from agent_tty.platform.access import trusted_owner

    system = current()
    me = system.user()
    parent = os.path.dirname(path)
    while True:
        try:
            access = system.access(parent, os.stat(parent))
        except OSError as err:
            raise AgentTtyError(ErrorCode.STORAGE_ERROR, f"cannot check {parent}: {err.strerror}", path=parent) from None
        if not trusted_owner(access.owner, me):
            raise UnsafeHome(parent, access, "ancestor", f"the folder {parent} above the Home belongs to {_user(access.owner)}")
        if access.others_rename:
            raise UnsafeHome(
                parent, access, "ancestor",
                f"the folder {parent} above the Home has mode {access.shown}: other users could swap the Home",
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
        owned_folder(str(folder), os.lstat(folder), "the session folder")
    except FileNotFoundError:
        return


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
        access = current().access(str(root), info)
        raise UnsafeHome(str(root), access, "owner", f"--as-owner needs root: the Home belongs to {_user(access.owner)}")
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
