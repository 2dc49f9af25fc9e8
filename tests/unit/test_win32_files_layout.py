"""platform/win32_files.py off Windows: its structures have Windows's x64 layout and its open
maps os.open's flags as CreateFileW needs them. The calls themselves run only on Windows (the
platforms workflow) or under Wine (scripts/test-wine)."""

from __future__ import annotations

import ctypes
import os

from agent_tty.platform import win32_files as w


def test_the_structures_have_windows_layouts() -> None:
    assert ctypes.sizeof(w.SECURITY_ATTRIBUTES) == 24  # DWORD, pad, pointer, BOOL, pad
    assert w.SECURITY_ATTRIBUTES.lpSecurityDescriptor.offset == 8
    assert ctypes.sizeof(w.ACL_SIZE_INFORMATION) == 12
    assert ctypes.sizeof(w.ACE_HEADER) == 4
    assert (w.ACCESS_ACE.Mask.offset, w.ACCESS_ACE.SidStart.offset) == (4, 8)


def test_open_flags_map_to_create_file_arguments() -> None:
    read, write = w.GENERIC_READ, w.GENERIC_WRITE
    extra = w.READ_CONTROL | w.FILE_READ_ATTRIBUTES
    assert w.create_file_args(os.O_RDONLY) == (read | extra, w.OPEN_EXISTING)
    assert w.create_file_args(os.O_WRONLY | os.O_CREAT | os.O_EXCL) == (write | extra, w.CREATE_NEW)
    assert w.create_file_args(os.O_WRONLY | os.O_CREAT | os.O_APPEND) == (write | extra, w.OPEN_ALWAYS)
    assert w.create_file_args(os.O_RDWR | os.O_CREAT | os.O_TRUNC) == (read | write | extra, w.CREATE_ALWAYS)
    assert w.create_file_args(os.O_WRONLY | os.O_TRUNC) == (write | extra, w.TRUNCATE_EXISTING)


def test_the_rename_asks_for_posix_semantics_and_names_the_target_by_its_whole_path() -> None:
    target = "C:\\Users\\me\\.agent-tty\\sessions\\s1\\events.jsonl"
    raw = bytes(w.rename_info(target))
    assert int.from_bytes(raw[0:4], "little") == w.FILE_RENAME_FLAG_REPLACE_IF_EXISTS | w.FILE_RENAME_FLAG_POSIX_SEMANTICS
    assert raw[8:16] == bytes(8)  # RootDirectory: none
    assert int.from_bytes(raw[16:20], "little") == len(target) * 2
    assert raw[20:-2].decode("utf-16-le") == target and raw[-2:] == b"\0\0"
    assert len(w.rename_info("a")) == 24  # never shorter than FILE_RENAME_INFO itself
