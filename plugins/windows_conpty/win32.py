"""The real Windows layer (layer.Win32): kernel32/advapi32 through ctypes, ConPTY through
pywinpty, command lines through psutil. The only module of the plugin that imports them, and
only inside functions: importing it anywhere is safe, calling it off Windows is not.

Not exercised on Linux: tests/platforms/windows_conpty replaces it with a fake, and the Windows
CI job (.github/workflows/platforms.yml) runs tests/platforms/windows_conpty/test_real_windows.py
against it.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
from ctypes import wintypes
from typing import Any

from agent_tty.platform.win32_files import (
    OWNER_SECURITY_INFORMATION,
    SDDL_REVISION_1,
    SECURITY_ATTRIBUTES,
    sid_text,
    token_user,
)

ERROR_FILE_NOT_FOUND = 2
ERROR_ACCESS_DENIED = 5
ERROR_INVALID_PARAMETER = 87
ERROR_ALREADY_EXISTS = 183

JOB_OBJECT_ASSIGN_PROCESS = 0x0001
JOB_OBJECT_QUERY = 0x0004
JOB_OBJECT_TERMINATE = 0x0008
READ_CONTROL = 0x00020000
JOB_ACCESS = JOB_OBJECT_ASSIGN_PROCESS | JOB_OBJECT_QUERY | JOB_OBJECT_TERMINATE | READ_CONTROL
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
JOBOBJECT_BASIC_ACCOUNTING_INFORMATION_CLASS = 1
JOBOBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9

PROCESS_TERMINATE = 0x0001
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
SYNCHRONIZE = 0x00100000
PROCESS_ACCESS = PROCESS_TERMINATE | PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE
SE_KERNEL_OBJECT = 6
WAIT_OBJECT_0 = 0


class IO_COUNTERS(ctypes.Structure):
    _fields_ = [(name, ctypes.c_ulonglong) for name in (
        "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
        "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]


class JOBOBJECT_BASIC_LIMIT_INFORMATION(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
        ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD), ("SchedulingClass", wintypes.DWORD),
    ]


class JOBOBJECT_EXTENDED_LIMIT_INFORMATION(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", JOBOBJECT_BASIC_LIMIT_INFORMATION), ("IoInfo", IO_COUNTERS),
        ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


class JOBOBJECT_BASIC_ACCOUNTING_INFORMATION(ctypes.Structure):
    _fields_ = [
        ("TotalUserTime", ctypes.c_int64), ("TotalKernelTime", ctypes.c_int64),
        ("ThisPeriodTotalUserTime", ctypes.c_int64), ("ThisPeriodTotalKernelTime", ctypes.c_int64),
        ("TotalPageFaultCount", wintypes.DWORD), ("TotalProcesses", wintypes.DWORD),
        ("ActiveProcesses", wintypes.DWORD), ("TotalTerminatedProcesses", wintypes.DWORD),
    ]


def _dlls() -> tuple[Any, Any]:
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)  # type: ignore[attr-defined]
    for name in ("CreateJobObjectW", "OpenJobObjectW", "OpenProcess", "GetCurrentProcess"):
        getattr(kernel32, name).restype = wintypes.HANDLE
    kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, wintypes.LPCWSTR]
    kernel32.OpenJobObjectW.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.LPCWSTR]
    kernel32.OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
    for name in ("CloseHandle", "TerminateJobObject", "TerminateProcess", "AssignProcessToJobObject"):
        getattr(kernel32, name).argtypes = [wintypes.HANDLE] + ([wintypes.UINT] if "Terminate" in name else [])
    kernel32.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
    kernel32.WaitForSingleObject.argtypes = [wintypes.HANDLE, wintypes.DWORD]
    kernel32.WaitForSingleObject.restype = wintypes.DWORD
    return kernel32, advapi32


_cache: dict[str, Any] = {}


def _k32() -> Any:
    if "k" not in _cache:
        _cache["k"], _cache["a"] = _dlls()
    return _cache["k"]


def _a32() -> Any:
    _k32()
    return _cache["a"]


def _error(what: str) -> OSError:
    code = ctypes.get_last_error()  # type: ignore[attr-defined]
    if code == ERROR_ACCESS_DENIED:
        return PermissionError(13, f"{what}: access denied")
    return OSError(0, f"{what} failed", None, code)


def _check(result: Any, what: str) -> Any:
    if not result:
        raise _error(what)
    return result


def _owner(handle: int) -> str:
    owner, descriptor = ctypes.c_void_p(), ctypes.c_void_p()
    status = _a32().GetSecurityInfo(
        wintypes.HANDLE(handle), SE_KERNEL_OBJECT, OWNER_SECURITY_INFORMATION,
        ctypes.byref(owner), None, None, None, ctypes.byref(descriptor),
    )
    if status != 0:
        raise OSError(0, "GetSecurityInfo failed", None, status)
    try:
        return sid_text(owner)
    finally:
        _k32().LocalFree(descriptor)


def _open_owned_job(name: str) -> int | None:
    handle = _k32().OpenJobObjectW(JOB_ACCESS, False, name)
    if not handle:
        if ctypes.get_last_error() == ERROR_FILE_NOT_FOUND:  # type: ignore[attr-defined]
            return None
        raise _error(f"OpenJobObject {name}")
    if _owner(handle) != RealWin32().user_sid():
        _k32().CloseHandle(handle)
        raise PermissionError(13, f"the job {name} is not this user's")
    return int(handle)


def join_job(name: str) -> None:
    """The trampoline's first step: put this very process in the session's job."""
    job = _open_owned_job(name)
    if job is None:
        raise FileNotFoundError(2, f"no job named {name}")
    try:
        _check(_k32().AssignProcessToJobObject(wintypes.HANDLE(job), _k32().GetCurrentProcess()), "AssignProcessToJobObject")
    finally:
        _k32().CloseHandle(wintypes.HANDLE(job))


class WinPty:
    """pywinpty's ConPTY (PTY), read and written as bytes."""

    def __init__(self, pty: Any) -> None:
        self._pty = pty
        self.pid = int(pty.pid)

    def read(self, limit: int) -> bytes:
        import time

        while True:
            try:
                data = self._pty.read(limit, blocking=True)
            except Exception:  # noqa: BLE001 - pywinpty raises WinptyError once the console closed
                return b""
            if isinstance(data, str):
                data = data.encode("utf-8", "surrogateescape")
            if data:
                return bytes(data)
            if self._pty.iseof():
                return b""
            time.sleep(0.01)  # a blocking read that came back empty: no busy loop

    def write(self, data: bytes) -> int:
        self._pty.write(data.decode("utf-8", "surrogateescape"))
        return len(data)

    def resize(self, cols: int, rows: int) -> None:
        self._pty.set_size(cols, rows)

    def exit_code(self) -> int | None:
        if self._pty.isalive():
            return None
        code = self._pty.get_exitstatus()
        return None if code is None else int(code)

    def close(self) -> None:
        self._pty = _Closed(self._pty)


class _Closed:
    """Dropping pywinpty's PTY closes the pseudo console (it has no close())."""

    def __init__(self, pty: Any) -> None:
        self._last = None if pty.isalive() else pty.get_exitstatus()
        del pty

    def read(self, *_: Any, **__: Any) -> str:
        return ""

    def iseof(self) -> bool:
        return True

    def isalive(self) -> bool:
        return False

    def get_exitstatus(self) -> int | None:
        return self._last

    def write(self, _: str) -> int:
        raise OSError(9, "the pseudo console is closed")

    def set_size(self, *_: int) -> None:
        return None


class RealWin32:
    def unusable_reason(self) -> str | None:
        if sys.platform != "win32":
            return "not Windows"
        if sys.getwindowsversion().build < 17763:  # type: ignore[attr-defined]
            return "ConPTY needs Windows 10 1809 (build 17763) or newer"
        try:
            import psutil  # noqa: F401
            import winpty  # noqa: F401
        except ImportError as err:
            return f"{err.name} cannot be imported: pip install pywinpty psutil"
        return None

    def user_sid(self) -> str:
        if "sid" not in _cache:
            sid = token_user(_k32().GetCurrentProcess())
            if sid is None:
                raise _error("OpenProcessToken")
            _cache["sid"] = sid
        return str(_cache["sid"])

    def logon_session(self) -> int:
        session = wintypes.DWORD()
        _check(_k32().ProcessIdToSessionId(_k32().GetCurrentProcessId(), ctypes.byref(session)), "ProcessIdToSessionId")
        return int(session.value)

    def create_job(self, name: str) -> int:
        sid = self.user_sid()
        descriptor = ctypes.c_void_p()
        _check(
            _a32().ConvertStringSecurityDescriptorToSecurityDescriptorW(
                f"O:{sid}D:P(A;;GA;;;{sid})", SDDL_REVISION_1, ctypes.byref(descriptor), None
            ),
            "ConvertStringSecurityDescriptorToSecurityDescriptorW",
        )
        try:
            attributes = SECURITY_ATTRIBUTES(ctypes.sizeof(SECURITY_ATTRIBUTES), descriptor, False)
            handle = _k32().CreateJobObjectW(ctypes.byref(attributes), name)
            if not handle:
                raise _error(f"CreateJobObject {name}")
            if ctypes.get_last_error() == ERROR_ALREADY_EXISTS:  # type: ignore[attr-defined]
                _k32().CloseHandle(handle)
                raise FileExistsError(17, f"a job named {name} exists already")
        finally:
            _k32().LocalFree(descriptor)
        limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        if not _k32().SetInformationJobObject(
            wintypes.HANDLE(handle), JOBOBJECT_EXTENDED_LIMIT_INFORMATION_CLASS, ctypes.byref(limits), ctypes.sizeof(limits)
        ):
            error = _error("SetInformationJobObject")
            _k32().CloseHandle(handle)
            raise error
        return int(handle)

    def open_job(self, name: str) -> int | None:
        return _open_owned_job(name)

    def job_active(self, job: int) -> int:
        info = JOBOBJECT_BASIC_ACCOUNTING_INFORMATION()
        _check(
            _k32().QueryInformationJobObject(
                wintypes.HANDLE(job), JOBOBJECT_BASIC_ACCOUNTING_INFORMATION_CLASS, ctypes.byref(info),
                ctypes.sizeof(info), None,
            ),
            "QueryInformationJobObject",
        )
        return int(info.ActiveProcesses)

    def terminate_job(self, job: int, exit_code: int) -> None:
        _check(_k32().TerminateJobObject(wintypes.HANDLE(job), exit_code), "TerminateJobObject")

    def close_handle(self, handle: int) -> None:
        _k32().CloseHandle(wintypes.HANDLE(handle))

    def spawn_in_job(
        self, job_name: str, argv: tuple[str, ...], env: dict[str, str], cwd: str | None, cols: int, rows: int
    ) -> WinPty:
        from winpty import PTY

        trampoline = ["-m", "agent_tty_plugins.windows_conpty.trampoline", job_name, "--", *argv]
        pty = PTY(cols, rows)
        block = "\0".join(f"{key}={value}" for key, value in env.items()) + "\0"
        if not pty.spawn(sys.executable, cmdline=" " + subprocess.list2cmdline(trampoline), cwd=cwd, env=block):
            raise OSError(0, f"ConPTY could not start {argv[0]}")
        return WinPty(pty)

    def in_any_job(self) -> bool:
        result = wintypes.BOOL()
        # The pseudo-handle is -1: as a bare int ctypes would pass it as a 32-bit int (overflow).
        current = wintypes.HANDLE(_k32().GetCurrentProcess())
        _check(_k32().IsProcessInJob(current, None, ctypes.byref(result)), "IsProcessInJob")
        return bool(result.value)

    def open_process(self, pid: int) -> int | None:
        handle = _k32().OpenProcess(PROCESS_ACCESS, False, pid)
        if not handle:
            if ctypes.get_last_error() == ERROR_INVALID_PARAMETER:  # type: ignore[attr-defined]
                return None  # no process has the pid
            raise _error(f"OpenProcess {pid}")
        return int(handle)

    def process_created(self, process: int) -> int:
        times = [wintypes.FILETIME() for _ in range(4)]
        _check(_k32().GetProcessTimes(wintypes.HANDLE(process), *map(ctypes.byref, times)), "GetProcessTimes")
        return (times[0].dwHighDateTime << 32) | times[0].dwLowDateTime

    def process_exited(self, process: int) -> bool:
        return bool(_k32().WaitForSingleObject(wintypes.HANDLE(process), 0) == WAIT_OBJECT_0)

    def process_user_sid(self, process: int) -> str | None:
        return token_user(process)

    def process_command_line(self, pid: int) -> list[str] | None:
        import psutil

        try:
            return list(psutil.Process(pid).cmdline())
        except (psutil.Error, OSError):
            return None

    def terminate_process(self, process: int, exit_code: int) -> None:
        _check(_k32().TerminateProcess(wintypes.HANDLE(process), exit_code), "TerminateProcess")
