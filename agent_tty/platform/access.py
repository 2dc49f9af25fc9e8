"""Who may change a folder of the Home: the facts storage/trust.py judges, from either system.

POSIX answers from a stat: the owner's uid and the mode bits. Windows answers from the folder's
security descriptor: the owner's SID and the DACL's entries, read by win32_files.py and judged
here (a pure function, so it is tested on any machine). The same three questions are asked of
both: may another user change it, read it, or rename what it holds?
"""

from __future__ import annotations

import stat

from agent_tty.frozen import Frozen

UserId = int | str
"""A uid (POSIX) or a SID in its string form (Windows)."""


class Access(Frozen):
    __slots__ = ("owner", "others_write", "others_read", "others_rename", "shown")
    owner: UserId
    others_write: bool
    """Another user may change it: add, replace or remove what it holds, or its permissions."""
    others_read: bool
    """Another user may read it, list what it holds, or pass through it."""
    others_rename: bool
    """Another user may rename or remove what it holds that is not theirs (an ancestor's
    danger: the sticky /tmp lets others add, but not swap what is ours)."""
    shown: str
    """The permissions as the system writes them, for an error: `0755`, or an SDDL string."""


OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
OTHERS_ANY = stat.S_IRWXG | stat.S_IRWXO


def posix_access(info: object) -> Access:
    mode = info.st_mode  # type: ignore[attr-defined]
    writable = bool(mode & OTHERS_WRITE)
    return Access(
        owner=int(info.st_uid),  # type: ignore[attr-defined]
        others_write=writable,
        others_read=bool(mode & OTHERS_ANY),
        others_rename=writable and not mode & stat.S_ISVTX,
        shown=f"{stat.S_IMODE(mode):04o}",
    )


# ---------------------------------------------------------------- Windows's DACL, judged

ACCESS_ALLOWED = 0
ACCESS_DENIED = 1
INHERIT_ONLY = 0x08
"""An ACE that only children inherit: it grants nothing on the folder itself."""

DELETE = 0x00010000
WRITE_DAC = 0x00040000
WRITE_OWNER = 0x00080000
GENERIC_ALL = 0x10000000
GENERIC_WRITE = 0x40000000
GENERIC_READ = 0x80000000
MAXIMUM_ALLOWED = 0x02000000
FILE_LIST_DIRECTORY = 0x0001  # FILE_READ_DATA
FILE_ADD_FILE = 0x0002  # FILE_WRITE_DATA
FILE_ADD_SUBDIRECTORY = 0x0004  # FILE_APPEND_DATA
FILE_TRAVERSE = 0x0020
FILE_DELETE_CHILD = 0x0040

GENERIC_EXECUTE = 0x20000000
READ_MASK = FILE_LIST_DIRECTORY | FILE_TRAVERSE | GENERIC_READ | GENERIC_EXECUTE | GENERIC_ALL
RENAME_MASK = DELETE | FILE_DELETE_CHILD | WRITE_DAC | WRITE_OWNER | GENERIC_ALL | MAXIMUM_ALLOWED
"""Rights that let their holder swap what a folder holds, or take the folder over."""
WRITE_MASK = RENAME_MASK | FILE_ADD_FILE | FILE_ADD_SUBDIRECTORY | GENERIC_WRITE

SYSTEM_SIDS = frozenset({
    "S-1-5-18",  # LocalSystem
    "S-1-5-32-544",  # BUILTIN\Administrators
    "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464",  # TrustedInstaller
})
"""Accounts that may change any file of the machine anyway, like root: trusting them to hold
rights on a folder adds no one who could not already act."""
CREATOR_OWNER = "S-1-3-0"
"""Stands for the owner; on a folder itself it only ever appears inherit-only."""


DENY_KINDS = frozenset({1, 6, 10, 12})
"""Deny entries (plain, object, callback, callback object): they take rights, never give."""
SIMPLE_LAYOUT = frozenset({0, 1, 9, 10})
"""Entries whose mask is followed by the SID (allowed, denied, and their callback forms)."""
EVERYTHING = 0xFFFFFFFF


def entry(kind: int, flags: int, mask: int, sid: str) -> Ace:
    """One DACL entry as judge_dacl takes it. A callback allow entry (its condition unknown
    here) counts as a plain one; an allow entry we do not read (object entries, whose SID
    sits elsewhere) counts as granting everything to someone else: a misjudgement may only
    refuse a safe Home, never trust one."""
    if kind in DENY_KINDS:
        return Ace(ACCESS_DENIED, flags, mask, sid)
    if kind in SIMPLE_LAYOUT:
        return Ace(ACCESS_ALLOWED, flags, mask, sid)
    return Ace(ACCESS_ALLOWED, flags, EVERYTHING, "")


class Ace(Frozen):
    __slots__ = ("kind", "flags", "mask", "sid")
    kind: int
    """ACCESS_ALLOWED or ACCESS_DENIED; other kinds (audit, object ACEs) are passed over."""
    flags: int
    mask: int
    sid: str


def judge_dacl(owner: str, aces: list[Ace] | None, me: str, shown: str) -> Access:
    """The Access a Windows security descriptor gives: rights another user holds through an
    allow entry that applies to the folder itself. A deny entry is not subtracted: a judgement
    that misses a deny only refuses a Home that was safe, never trusts one that was not. None
    for `aces` is a NULL DACL: everyone may do everything."""
    if aces is None:
        return Access(owner=owner, others_write=True, others_read=True, others_rename=True, shown=shown)
    granted = 0
    trusted = SYSTEM_SIDS | {me}
    for ace in aces:
        holder = owner if ace.sid == CREATOR_OWNER else ace.sid
        if ace.kind != ACCESS_ALLOWED or ace.flags & INHERIT_ONLY or holder in trusted:
            continue
        granted |= ace.mask
    return Access(
        owner=owner,
        others_write=bool(granted & WRITE_MASK),
        others_read=bool(granted & READ_MASK),
        others_rename=bool(granted & RENAME_MASK),
        shown=shown,
    )


def trusted_owner(owner: UserId, me: UserId) -> bool:
    """An owner that may own a folder above the Home: us, root, or Windows's system accounts."""
    return owner == me or owner == 0 or owner in SYSTEM_SIDS
