"""platform/access.py: the same three questions asked of a POSIX mode and of a Windows DACL.

The DACLs below are the ones Windows gives the folders a Home meets: a profile folder, the
drive's root (anyone may add a folder, no one may remove another's), a folder made under the
root (it inherits Authenticated Users' Modify), and what mkdir_private makes."""

from __future__ import annotations

import os
import stat
from types import SimpleNamespace

from agent_tty.platform import access
from agent_tty.platform.access import ACCESS_ALLOWED, ACCESS_DENIED, INHERIT_ONLY, Ace, entry, judge_dacl, posix_access

ME = "S-1-5-21-1-2-3-1001"
OTHER = "S-1-5-21-1-2-3-1002"
AUTHENTICATED_USERS = "S-1-5-11"
USERS = "S-1-5-32-545"
SYSTEM, ADMINS = "S-1-5-18", "S-1-5-32-544"
FULL = 0x001F01FF  # FILE_ALL_ACCESS
READ_EXECUTE = 0x001200A9
MODIFY = 0x001301BF
APPEND = 0x00000004  # FILE_ADD_SUBDIRECTORY
CONTAINER_OBJECT = 0x3  # OI|CI


def allow(sid: str, mask: int, flags: int = 0) -> Ace:
    return Ace(ACCESS_ALLOWED, flags, mask, sid)


def test_a_profile_folder_is_private() -> None:
    judged = judge_dacl(ME, [allow(SYSTEM, FULL), allow(ADMINS, FULL), allow(ME, FULL)], ME, "")
    assert (judged.owner, judged.others_write, judged.others_read, judged.others_rename) == (ME, False, False, False)


def test_mkdir_private_s_dacl_is_private() -> None:
    aces = [allow(sid, FULL, CONTAINER_OBJECT) for sid in (ME, SYSTEM, ADMINS)]
    judged = judge_dacl(ME, aces, ME, "")
    assert not (judged.others_write or judged.others_read or judged.others_rename)


def test_the_drive_root_lets_others_add_but_not_rename() -> None:
    aces = [
        allow(ADMINS, FULL, CONTAINER_OBJECT), allow(SYSTEM, FULL, CONTAINER_OBJECT),
        allow(USERS, READ_EXECUTE, CONTAINER_OBJECT),
        allow(AUTHENTICATED_USERS, MODIFY, CONTAINER_OBJECT | INHERIT_ONLY),  # for what is made below
        allow(AUTHENTICATED_USERS, APPEND),
    ]
    judged = judge_dacl("S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464", aces, ME, "")
    assert judged.others_write and not judged.others_rename  # like a sticky /tmp
    assert access.trusted_owner(judged.owner, ME)


def test_a_folder_made_under_the_drive_root_is_open_to_every_user() -> None:
    judged = judge_dacl(ME, [allow(ME, FULL), allow(AUTHENTICATED_USERS, MODIFY)], ME, "")
    assert judged.others_write and judged.others_rename and judged.others_read


def test_another_user_s_entry_or_a_null_dacl_is_seen() -> None:
    assert judge_dacl(ME, [allow(ME, FULL), allow(OTHER, 0x00010000)], ME, "").others_rename  # DELETE
    assert judge_dacl(ME, [allow(ME, FULL), allow(OTHER, 0x10000000)], ME, "").others_write  # GENERIC_ALL
    assert judge_dacl(ME, [allow(OTHER, 0x80000000)], ME, "").others_read  # GENERIC_READ
    null = judge_dacl(ME, None, ME, "")
    assert null.others_write and null.others_read and null.others_rename


def test_a_deny_entry_never_makes_a_folder_trusted() -> None:
    aces = [Ace(ACCESS_DENIED, 0, FULL, OTHER), allow(OTHER, MODIFY)]
    assert judge_dacl(ME, aces, ME, "").others_write


def test_creator_owner_stands_for_the_owner() -> None:
    assert not judge_dacl(ME, [allow(access.CREATOR_OWNER, FULL)], ME, "").others_write
    assert judge_dacl(OTHER, [allow(access.CREATOR_OWNER, FULL)], ME, "").others_write


def test_posix_access_reads_the_mode() -> None:
    def folder(mode: int, uid: int = 1000) -> SimpleNamespace:
        return SimpleNamespace(st_mode=stat.S_IFDIR | mode, st_uid=uid)

    assert posix_access(folder(0o700)) == access.Access(1000, False, False, False, "0700")
    assert posix_access(folder(0o711)).others_read and not posix_access(folder(0o711)).others_write
    assert posix_access(folder(0o777)).others_rename
    sticky = posix_access(folder(0o1777, 0))
    assert sticky.others_write and not sticky.others_rename and sticky.shown == "1777"
    assert access.trusted_owner(0, 1000) and not access.trusted_owner(1001, 1000)


def test_the_real_home_folder_reads_the_same_through_the_system(tmp_path: object) -> None:
    from agent_tty.platform.system import current

    folder = os.path.join(str(tmp_path), "home")
    current().mkdir_private(folder)
    judged = current().access(folder, os.lstat(folder))
    assert judged.owner == current().user() and not (judged.others_write or judged.others_read)


def test_every_kind_of_allow_entry_counts() -> None:
    callback_allow = entry(9, 0, MODIFY, OTHER)  # a conditional entry: its condition is not read
    object_allow = entry(5, 0, 0, "")  # an object entry: its SID is not read, so anyone
    callback_deny = entry(10, 0, FULL, OTHER)
    assert judge_dacl(ME, [allow(ME, FULL), callback_allow], ME, "").others_write
    assert judge_dacl(ME, [allow(ME, FULL), object_allow], ME, "").others_rename
    assert not judge_dacl(ME, [allow(ME, FULL), callback_deny], ME, "").others_write
    assert judge_dacl(ME, [allow(OTHER, 0x20000000)], ME, "").others_read  # GENERIC_EXECUTE: passing through
