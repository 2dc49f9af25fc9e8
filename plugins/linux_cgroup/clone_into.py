"""A fork whose child is born in a cgroup: clone3(CLONE_INTO_CGROUP) through ctypes (Linux >= 5.7).

Writing a pid into cgroup.procs migrates a running process, and the kernel's migration takes
the write side of cgroup_threadgroup_rwsem, which waits for an RCU grace period: 7-29 ms per
write on the machines we measured (issue 27, item 2; bench/cgroup_spawn.py). A child that clone3
starts in its cgroup was never anywhere else: the fork path takes the cheap read side only, and
the kernel checks the same permissions a write to the cgroup's cgroup.procs would (ADR 0045).

The call is a fork, not a thread: no CLONE_VM, no new stack, exit_signal SIGCHLD, so the child
is a copy that returns here with 0 and is reaped with waitpid, as after os.fork. It goes through
the C library's syscall(), with the GIL held (PyDLL), between PyOS_BeforeFork and
PyOS_AfterFork_Child/Parent, the calls os.fork makes and that CPython documents for "any similar
function that clones the current process". What os.fork gets from the C library's fork() and a
raw clone3 does not: its own at-fork handlers (malloc's and stdio's locks, which no other thread
can hold when there is none) and the thread's cached tid (raise() and pthread_kill() on itself
then fail with ESRCH; the child before its exec calls neither). So fork_into refuses a process
with more than one thread, and the caller forks as before.
"""

from __future__ import annotations

import errno
import os
import signal

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: linux_cgroup imports this module on every command that judges a host
    from typing import Any

CLONE_INTO_CGROUP = 0x200000000
_SYS_CLONE3 = 435
"""The same number on every architecture of the kernel's common table; alpha's differs."""
_MACHINES = frozenset({"x86_64", "aarch64", "arm64", "riscv64", "ppc64le", "ppc64", "s390x", "loongarch64", "i386", "i686", "armv7l", "armv8l"})

UNAVAILABLE = {
    errno.ENOSYS: "the kernel has no clone3 (Linux < 5.3), or a seccomp filter hides it",
    errno.EPERM: "a seccomp filter refuses clone3",
    errno.E2BIG: "the kernel's clone3 has no cgroup field (Linux < 5.7)",
    errno.EINVAL: "the kernel does not know CLONE_INTO_CGROUP (Linux < 5.7)",
}
"""Errors that say clone3 cannot start a child into a cgroup in this process, ever: remembered."""
NOT_HERE = {
    errno.EBUSY: "the cgroup cannot take processes (it has controllers for its children)",
    errno.EOPNOTSUPP: "the cgroup cannot take processes (a threaded or invalid domain)",
    errno.EBADF: "the folder is not a cgroup2 folder",
}
"""Errors about this cgroup only: the caller forks and moves the child in, and meets the same
refusal there if it is one."""


class Unavailable(Exception):
    """clone3 cannot start this child into this cgroup: fork and move it in instead."""


_refused: str | None = None
_call: Any = None


def _bind() -> Any:
    """syscall(), PyOS_BeforeFork and the two PyOS_AfterFork calls, bound once."""
    global _call
    if _call is None:
        import ctypes

        class CloneArgs(ctypes.Structure):
            # struct clone_args (linux/sched.h), CLONE_ARGS_SIZE_VER2: every field a __u64.
            _fields_ = [
                (name, ctypes.c_uint64)
                for name in (
                    "flags", "pidfd", "child_tid", "parent_tid", "exit_signal", "stack", "stack_size",
                    "tls", "set_tid", "set_tid_size", "cgroup",
                )
            ]

        libc = ctypes.PyDLL(None, use_errno=True)  # PyDLL: the GIL stays held across the call
        syscall = libc.syscall
        syscall.restype = ctypes.c_long
        syscall.argtypes = [ctypes.c_long, ctypes.c_void_p, ctypes.c_size_t]
        api = ctypes.pythonapi
        for name in ("PyOS_BeforeFork", "PyOS_AfterFork_Parent", "PyOS_AfterFork_Child"):
            getattr(api, name).restype = None
            getattr(api, name).argtypes = []
        _call = (ctypes, CloneArgs, syscall, api)
    return _call


def threads() -> int | None:
    """How many threads this process has, or None when /proc cannot tell."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def fork_into(cgroup_fd: int) -> int:
    """os.fork, with the child born in the cgroup of `cgroup_fd` (a cgroup2 folder opened
    O_RDONLY|O_DIRECTORY or O_PATH): the child's pid in the parent, 0 in the child.

    Raises Unavailable when this way is not open here (not Linux on a known architecture, more
    than one thread, or an error of UNAVAILABLE or NOT_HERE), and the OSError of any other
    refusal, as a fork and a write to cgroup.procs would meet it: EAGAIN or ENOMEM (a resource
    limit), EACCES or ENOENT (no write access to the cgroup or a common ancestor, or outside our
    cgroup namespace), ENOENT or ENODEV (the cgroup was removed: Linux 6.18 says ENOENT).
    """
    global _refused
    if _refused is None and (os.uname().sysname != "Linux" or os.uname().machine not in _MACHINES):
        _refused = f"clone3 is not wired up for {os.uname().sysname} {os.uname().machine}"
    if _refused is not None:
        raise Unavailable(_refused)
    count = threads()
    if count != 1:
        # Another thread could hold a lock of the C library that the child then never sees
        # released; os.fork's own at-fork handlers cover that, a raw clone3 does not.
        raise Unavailable(f"this process has {count or 'an unknown number of'} threads")
    ctypes, CloneArgs, syscall, api = _bind()
    if ctypes.sizeof(ctypes.c_void_p) != 8 and os.uname().machine == "x86_64":
        _refused = "clone3 is not wired up for the x32 ABI"
        raise Unavailable(_refused)
    args = CloneArgs(flags=CLONE_INTO_CGROUP, exit_signal=signal.SIGCHLD, cgroup=cgroup_fd)
    pointer, size = ctypes.addressof(args), ctypes.sizeof(args)
    api.PyOS_BeforeFork()
    try:
        pid = syscall(_SYS_CLONE3, pointer, size)
    except BaseException:
        api.PyOS_AfterFork_Parent()
        raise
    if pid == 0:
        api.PyOS_AfterFork_Child()
        return 0
    number = ctypes.get_errno()
    api.PyOS_AfterFork_Parent()
    if pid > 0:
        return pid
    if number in UNAVAILABLE:
        _refused = f"{UNAVAILABLE[number]} ({errno.errorcode.get(number, number)})"
        raise Unavailable(_refused)
    if number in NOT_HERE:
        raise Unavailable(f"{NOT_HERE[number]} ({errno.errorcode.get(number, number)})")
    raise OSError(number, os.strerror(number))
