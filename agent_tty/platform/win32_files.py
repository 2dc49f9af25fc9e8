"""Windows's answers for the Home: the user's SID, who owns a file and who may change it, an
open that never follows a reparse point, and a private folder. kernel32/advapi32 through
ctypes, imported by system.py's WindowsSystem only (importing it elsewhere is safe; calling it
off Windows is not).

What each answer means, and why it is enough, is docs/adr/0022-storage-without-descriptor-
folders.md; access.judge_dacl judges what `access` reads.
"""

from __future__ import annotations

import ctypes
import os
from ctypes import wintypes
from typing import Any

from agent_tty.platform.access import SIMPLE_LAYOUT, Access, Ace, entry, judge_dacl

GENERIC_READ = 0x80000000
GENERIC_WRITE = 0x40000000
READ_CONTROL = 0x00020000
FILE_READ_ATTRIBUTES = 0x0080
FILE_SHARE_ALL = 0x1 | 0x2 | 0x4  # read, write, delete: a record may be renamed over while read
CREATE_NEW, CREATE_ALWAYS, OPEN_EXISTING, OPEN_ALWAYS, TRUNCATE_EXISTING = 1, 2, 3, 4, 5
FILE_ATTRIBUTE_NORMAL = 0x80
FILE_FLAG_BACKUP_SEMANTICS = 0x02000000  # lets a folder open as a handle
FILE_FLAG_OPEN_REPARSE_POINT = 0x00200000  # the link itself, never what it names
INVALID_HANDLE_VALUE = ctypes.c_void_p(-1).value

SE_FILE_OBJECT = 1
OWNER_SECURITY_INFORMATION = 0x1
DACL_SECURITY_INFORMATION = 0x4
SDDL_REVISION_1 = 1
ACL_SIZE_INFORMATION_CLASS = 2
TOKEN_QUERY = 0x0008
TOKEN_USER_CLASS = 1


# Fixed-width fields: a DWORD is 32 bits on Windows, and the layouts are checked on Linux too
# (tests/unit/test_win32_files_layout.py), where wintypes.DWORD is 64.
class SECURITY_ATTRIBUTES(ctypes.Structure):
    _fields_ = [("nLength", ctypes.c_uint32), ("lpSecurityDescriptor", ctypes.c_void_p), ("bInheritHandle", ctypes.c_int32)]


class ACL_SIZE_INFORMATION(ctypes.Structure):
    _fields_ = [("AceCount", ctypes.c_uint32), ("AclBytesInUse", ctypes.c_uint32), ("AclBytesFree", ctypes.c_uint32)]


class ACE_HEADER(ctypes.Structure):
    _fields_ = [("AceType", ctypes.c_uint8), ("AceFlags", ctypes.c_uint8), ("AceSize", ctypes.c_uint16)]


class ACCESS_ACE(ctypes.Structure):
    """ACCESS_ALLOWED_ACE and ACCESS_DENIED_ACE: the SID starts where SidStart is."""

    _fields_ = [("Header", ACE_HEADER), ("Mask", ctypes.c_uint32), ("SidStart", ctypes.c_uint32)]


_dlls: dict[str, Any] = {}


def _load() -> tuple[Any, Any]:
    if not _dlls:
        k32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
        a32 = ctypes.WinDLL("advapi32", use_last_error=True)  # type: ignore[attr-defined]
        k32.CreateFileW.argtypes = [
            wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, ctypes.POINTER(SECURITY_ATTRIBUTES),
            wintypes.DWORD, wintypes.DWORD, wintypes.HANDLE,
        ]
        k32.CreateFileW.restype = wintypes.HANDLE
        k32.CreateDirectoryW.argtypes = [wintypes.LPCWSTR, ctypes.POINTER(SECURITY_ATTRIBUTES)]
        k32.CreateDirectoryW.restype = wintypes.BOOL
        k32.CloseHandle.argtypes = [wintypes.HANDLE]
        k32.SetFileInformationByHandle.argtypes = [wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD]
        k32.SetFileInformationByHandle.restype = wintypes.BOOL
        k32.LocalFree.argtypes = [ctypes.c_void_p]
        k32.LocalFree.restype = ctypes.c_void_p
        k32.GetCurrentProcess.restype = wintypes.HANDLE
        a32.OpenProcessToken.argtypes = [wintypes.HANDLE, wintypes.DWORD, ctypes.POINTER(wintypes.HANDLE)]
        a32.GetTokenInformation.argtypes = [
            wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD, ctypes.POINTER(wintypes.DWORD),
        ]
        a32.ConvertSidToStringSidW.argtypes = [ctypes.c_void_p, ctypes.POINTER(wintypes.LPWSTR)]
        a32.GetSecurityInfo.argtypes = [
            wintypes.HANDLE, ctypes.c_int, wintypes.DWORD, ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_void_p),
        ]
        a32.GetSecurityInfo.restype = wintypes.DWORD
        a32.GetAclInformation.argtypes = [ctypes.c_void_p, ctypes.c_void_p, wintypes.DWORD, ctypes.c_int]
        a32.GetAce.argtypes = [ctypes.c_void_p, wintypes.DWORD, ctypes.POINTER(ctypes.c_void_p)]
        a32.ConvertSecurityDescriptorToStringSecurityDescriptorW.argtypes = [
            ctypes.c_void_p, wintypes.DWORD, wintypes.DWORD, ctypes.POINTER(wintypes.LPWSTR), ctypes.c_void_p,
        ]
        a32.ConvertStringSecurityDescriptorToSecurityDescriptorW.argtypes = [
            wintypes.LPCWSTR, wintypes.DWORD, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
        ]
        _dlls["k"], _dlls["a"] = k32, a32
    return _dlls["k"], _dlls["a"]


def _last_error(what: str, path: str | None = None) -> OSError:
    code = ctypes.get_last_error()  # type: ignore[attr-defined]
    error = ctypes.WinError(code)  # type: ignore[attr-defined]  # errno and class from the code
    return type(error)(error.errno, f"{what}: {error.strerror}", path, code)


def sid_text(psid: ctypes.c_void_p | int) -> str:
    """A SID in its string form (S-1-5-...)."""
    k32, a32 = _load()
    text = wintypes.LPWSTR()
    if not a32.ConvertSidToStringSidW(psid, ctypes.byref(text)):
        raise _last_error("ConvertSidToStringSidW")
    try:
        return str(text.value)
    finally:
        k32.LocalFree(ctypes.cast(text, ctypes.c_void_p))


def token_user(process: int) -> str | None:
    """The SID of the user a process runs as (its token's); None when its token cannot be read."""
    k32, a32 = _load()
    token = wintypes.HANDLE()
    if not a32.OpenProcessToken(process, TOKEN_QUERY, ctypes.byref(token)):
        return None
    try:
        needed = wintypes.DWORD()
        a32.GetTokenInformation(token, TOKEN_USER_CLASS, None, 0, ctypes.byref(needed))
        buffer = ctypes.create_string_buffer(needed.value)
        if not a32.GetTokenInformation(token, TOKEN_USER_CLASS, buffer, needed, ctypes.byref(needed)):
            return None
        return sid_text(ctypes.cast(buffer, ctypes.POINTER(ctypes.c_void_p))[0])  # TOKEN_USER.User.Sid
    finally:
        k32.CloseHandle(token)


_user: list[str] = []


def user_sid() -> str:
    """The SID of this process's user, in string form."""
    if not _user:
        k32, _a32 = _load()
        sid = token_user(k32.GetCurrentProcess())
        if sid is None:
            raise _last_error("OpenProcessToken")
        _user.append(sid)
    return _user[0]


def _security(handle: int, what: int) -> tuple[str, list[Ace] | None, str]:
    """The owner, the DACL's entries (None: a NULL DACL) and the SDDL of a handle's object."""
    k32, a32 = _load()
    owner, dacl, descriptor = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    status = a32.GetSecurityInfo(
        handle, SE_FILE_OBJECT, what, ctypes.byref(owner), None,
        ctypes.byref(dacl) if what & DACL_SECURITY_INFORMATION else None, None, ctypes.byref(descriptor),
    )
    if status != 0:
        error = ctypes.WinError(status)  # type: ignore[attr-defined]
        raise type(error)(error.errno, f"GetSecurityInfo: {error.strerror}", None, status)
    try:
        aces: list[Ace] | None = None
        if dacl.value:
            size = ACL_SIZE_INFORMATION()
            if not a32.GetAclInformation(dacl, ctypes.byref(size), ctypes.sizeof(size), ACL_SIZE_INFORMATION_CLASS):
                raise _last_error("GetAclInformation")
            aces = []
            for index in range(size.AceCount):
                pointer = ctypes.c_void_p()
                if not a32.GetAce(dacl, index, ctypes.byref(pointer)):
                    raise _last_error("GetAce")
                ace = ctypes.cast(pointer, ctypes.POINTER(ACCESS_ACE)).contents
                kind = ace.Header.AceType
                sid = ""
                if kind in SIMPLE_LAYOUT:  # the mask, then the SID where SidStart is
                    sid = sid_text(pointer.value + ACCESS_ACE.SidStart.offset)  # type: ignore[operator]
                aces.append(entry(kind, ace.Header.AceFlags, ace.Mask, sid))
        text = wintypes.LPWSTR()
        shown = ""
        if a32.ConvertSecurityDescriptorToStringSecurityDescriptorW(descriptor, SDDL_REVISION_1, what, ctypes.byref(text), None):
            shown = str(text.value)
            k32.LocalFree(ctypes.cast(text, ctypes.c_void_p))
        return sid_text(owner), aces, shown
    finally:
        k32.LocalFree(descriptor)


def _open_entry(path: str) -> int:
    """A handle on `path` itself (a folder, a file or a link, never what a link names) that
    may read its security descriptor."""
    k32, _a32 = _load()
    handle = k32.CreateFileW(
        path, READ_CONTROL | FILE_READ_ATTRIBUTES, FILE_SHARE_ALL, None, OPEN_EXISTING,
        FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, None,
    )
    if handle is None or handle == INVALID_HANDLE_VALUE:
        raise _last_error("CreateFileW", path)
    return int(handle)


def access(path: str, me: str) -> Access:
    k32, _a32 = _load()
    handle = _open_entry(path)
    try:
        owner, aces, shown = _security(handle, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION)
    finally:
        k32.CloseHandle(handle)
    return judge_dacl(owner, aces, me, shown)


def fd_owner(fd: int) -> str:
    import msvcrt

    return _security(msvcrt.get_osfhandle(fd), OWNER_SECURITY_INFORMATION)[0]  # type: ignore[attr-defined]


def _owned_by(sid: str) -> tuple[SECURITY_ATTRIBUTES, ctypes.c_void_p]:
    """Security attributes that make `sid` the owner (an elevated administrator's files are
    otherwise owned by the Administrators group) and keep the inherited DACL."""
    _k32, a32 = _load()
    descriptor = ctypes.c_void_p()
    if not a32.ConvertStringSecurityDescriptorToSecurityDescriptorW(f"O:{sid}", SDDL_REVISION_1, ctypes.byref(descriptor), None):
        raise _last_error("ConvertStringSecurityDescriptorToSecurityDescriptorW")
    return SECURITY_ATTRIBUTES(ctypes.sizeof(SECURITY_ATTRIBUTES), descriptor, False), descriptor


def create_file_args(flags: int) -> tuple[int, int]:
    """CreateFileW's desired access and creation disposition for os.open's flags."""
    if flags & os.O_RDWR:
        wanted = GENERIC_READ | GENERIC_WRITE
    elif flags & os.O_WRONLY:
        wanted = GENERIC_WRITE
    else:
        wanted = GENERIC_READ
    wanted |= READ_CONTROL | FILE_READ_ATTRIBUTES  # fstat and fd_owner on the same fd
    if flags & os.O_CREAT and flags & os.O_EXCL:
        return wanted, CREATE_NEW
    if flags & os.O_CREAT:
        return wanted, CREATE_ALWAYS if flags & os.O_TRUNC else OPEN_ALWAYS
    return wanted, TRUNCATE_EXISTING if flags & os.O_TRUNC else OPEN_EXISTING


def open_file(path: str, flags: int, me: str) -> int:
    """os.open's flags, opened by CreateFileW: shared for deletion (a record renamed over
    while someone reads it), never through a reparse point, owned by us when created."""
    import msvcrt

    k32, _a32 = _load()
    wanted, disposition = create_file_args(flags)
    attributes, descriptor = _owned_by(me) if flags & os.O_CREAT else (None, None)
    try:
        handle = k32.CreateFileW(
            path, wanted, FILE_SHARE_ALL, ctypes.byref(attributes) if attributes is not None else None,
            disposition, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, None,
        )
        failed = _last_error("CreateFileW", path) if handle is None or handle == INVALID_HANDLE_VALUE else None
    finally:
        if descriptor is not None:
            k32.LocalFree(descriptor)
    if failed is not None:
        raise failed
    try:
        crt = flags & (os.O_APPEND | os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
        return int(msvcrt.open_osfhandle(int(handle), crt))  # type: ignore[attr-defined]
    except BaseException:
        k32.CloseHandle(handle)
        raise


DELETE = 0x00010000
SYNCHRONIZE = 0x00100000
FILE_RENAME_INFO_EX_CLASS = 22  # FileRenameInfoEx (Windows 10 1709 and newer)
FILE_RENAME_FLAG_REPLACE_IF_EXISTS = 0x1
FILE_RENAME_FLAG_POSIX_SEMANTICS = 0x2
"""The name moves at once even while the replaced file is open (shared for deletion), as a
POSIX rename does; without it, the replaced name stays taken until its last reader closes."""
NOT_SUPPORTED = frozenset({1, 50, 87, 120})  # invalid function, not supported, invalid parameter, not implemented


def rename_info(target: str) -> ctypes.Array[ctypes.c_char]:
    """FILE_RENAME_INFO for the absolute path `target` (a bare name would be taken relative to
    the process's current folder): Flags (a DWORD, in a union with ReplaceIfExists),
    RootDirectory (a handle, at 8 on x64, none), FileNameLength in bytes (at 16), then the
    name (at 20), NUL-terminated; never shorter than the structure (24 bytes)."""
    encoded = target.encode("utf-16-le")
    buffer = ctypes.create_string_buffer(max(24, 20 + len(encoded) + 2))
    flags = FILE_RENAME_FLAG_REPLACE_IF_EXISTS | FILE_RENAME_FLAG_POSIX_SEMANTICS
    ctypes.memmove(buffer, flags.to_bytes(4, "little"), 4)
    ctypes.memmove(ctypes.addressof(buffer) + 16, len(encoded).to_bytes(4, "little"), 4)
    ctypes.memmove(ctypes.addressof(buffer) + 20, encoded, len(encoded))
    return buffer


def replace(source: str, target: str) -> None:
    """Rename `source` over `target` in the same folder with POSIX semantics, so a reader that
    holds `target` never blocks it; where the system has no such rename (before Windows 10
    1709, some file systems, Wine 8), MoveFileEx's, which fails while `target` is open."""
    k32, _a32 = _load()
    handle = k32.CreateFileW(
        source, DELETE | SYNCHRONIZE, FILE_SHARE_ALL, None, OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, None,
    )
    if handle is None or handle == INVALID_HANDLE_VALUE:
        raise _last_error("CreateFileW", source)
    try:
        info = rename_info(os.path.abspath(target))
        if k32.SetFileInformationByHandle(handle, FILE_RENAME_INFO_EX_CLASS, info, len(info)):
            return
        code = ctypes.get_last_error()  # type: ignore[attr-defined]
        if code not in NOT_SUPPORTED:
            error = ctypes.WinError(code)  # type: ignore[attr-defined]
            raise type(error)(error.errno, f"rename: {error.strerror}", source, code, target)
    finally:
        k32.CloseHandle(handle)
    os.replace(source, target)


def mkdir_private(path: str, me: str) -> None:
    """A folder owned by us that only we, SYSTEM and the Administrators may enter, and whose
    content inherits the same (the DACL is protected: nothing from the parent comes in)."""
    k32, a32 = _load()
    descriptor = ctypes.c_void_p()
    sddl = f"O:{me}D:P(A;OICI;FA;;;{me})(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"
    if not a32.ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, ctypes.byref(descriptor), None):
        raise _last_error("ConvertStringSecurityDescriptorToSecurityDescriptorW")
    try:
        attributes = SECURITY_ATTRIBUTES(ctypes.sizeof(SECURITY_ATTRIBUTES), descriptor, False)
        if not k32.CreateDirectoryW(path, ctypes.byref(attributes)):
            raise _last_error("CreateDirectoryW", path)
    finally:
        k32.LocalFree(descriptor)
