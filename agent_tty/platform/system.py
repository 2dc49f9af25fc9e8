"""The operating system below the lifecycle: who we are, how a host is reached and launched.

The core never asks the os or socket module for these facts directly (tests/unit/test_no_posix
_in_core.py scans for it): it asks `current()`, one object per family of systems, chosen by
`sys.platform` the way psutil picks its backend behind one façade. The platform plugins
(hookspecs.py) carry what proves and stops a program's processes; this object carries the
rest: the user that owns private folders, the host's transport, and the launch of a process
that must outlive its caller. docs/adr/0010-the-platform-seam.md says why it is split so.
"""

from __future__ import annotations

import _socket
import os
import sys
from functools import cache

from agent_tty.protocol.errors import AgentTtyError, ErrorCode

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command ~2 ms at start-up (issue 26)
    import socket
    from typing import Any

    from agent_tty.platform import loopback
    from agent_tty.platform.access import Access, UserId

TRANSPORT_ENV = "AGENT_TTY_TRANSPORT"
"""`loopback` makes a POSIX host serve its session on an authenticated loopback port, Windows's
transport (platform/loopback.py), instead of a Unix socket; callers follow what the host serves."""
LISTEN_BACKLOG = 1024
"""Callers a host's socket queues while it is busy (the kernel caps it at net.core.somaxconn);
past it a connect gets EAGAIN and the client retries (protocol/rpc.py)."""


class System:
    """What the core needs from an operating system. Subclasses answer for one family."""

    name = "unknown"
    supported = False
    reason = "agent-tty has no support for this operating system yet"
    dir_fds = False
    """Whether folders open as fds and opens refuse links (O_NOFOLLOW, dir_fd): storage/fs.py
    acts through them where they exist and checks each open after the fact where not."""

    def user(self) -> UserId:
        """The id that owns our Home, socket folders and records (POSIX: the effective uid;
        Windows: the SID of the process's user)."""
        raise self._unsupported("tell the current user")

    def is_admin(self) -> bool:
        """Whether we may act as another user (POSIX: euid 0)."""
        return False

    def user_name(self, user: UserId) -> str:
        return str(user)

    # ------------------------------------------------------------ who may change a file

    def access(self, path: str, info: os.stat_result) -> Access:
        """Who owns `path` (which `info`, an lstat of it, describes) and what others may do."""
        raise self._unsupported("tell who may change a folder")

    def owner(self, path: str, info: os.stat_result) -> UserId:
        """The owner of `path`, an entry that `info` (its lstat) shows to be no link."""
        return self.access(path, info).owner

    def fd_owner(self, fd: int, info: os.stat_result) -> UserId:
        """The owner of the file `fd` holds (`info` is its fstat)."""
        raise self._unsupported("tell who owns a file")

    def mkdir_private(self, path: str) -> None:
        """A new folder only we (and the system's own accounts) may enter; FileExistsError."""
        os.mkdir(path, 0o700)

    def replace(self, source: str, target: str) -> None:
        """Rename `source` over `target`, a name in the same folder."""
        os.replace(source, target)

    socket_path_max: int | None = None
    """The longest path a host's socket may have (a Unix socket's sun_path); None: no limit."""

    def temp_root(self) -> str | None:
        """A shared folder (sticky, like /tmp) where a private socket folder may go when the
        Home's is too long; None where there is none."""
        return None

    def fix_writable(self, path: str) -> str:
        """How a user makes `path` private, for an UNSAFE_HOME error."""
        return "use a private Home (--home)"

    def become(self, user: int, group: int) -> None:
        """Act as `user` for the rest of this process (root's --as-owner), or raise."""
        raise self._unsupported("act as another user")

    def detached(self) -> dict[str, Any]:
        """subprocess.Popen arguments for a process that must outlive us and our terminal."""
        raise self._unsupported("start a detached process")

    def process_limit(self) -> str | None:
        """The limit a refused new process most likely met, said for a person (None: none known)."""
        return None

    def foreground(self, terminal_fd: int) -> tuple[int, str | None] | None:
        """The foreground process group of the terminal whose controller is `terminal_fd`, and
        the name of its leader (None when unread); None where it cannot be told."""
        return None

    def terminal_echoes(self, terminal_fd: int) -> bool | None:
        """Whether the terminal whose controller is `terminal_fd` echoes input itself (the line
        discipline's ECHO: on in a shell's canonical mode, off while a line editor reads); None
        where it cannot be told (no termios)."""
        return None

    def terminal_check(self) -> dict[str, Any]:
        """Whether this process can open a terminal for a program: {"ok": bool, "reason"?}."""
        return {"ok": False, "reason": self.reason}

    def open_file(self, path: str, flags: int, mode: int) -> int:
        """An fd for `path` where opens cannot refuse a link (storage/fs.py checks it after):
        in binary mode, and not inherited by children (os.open's default since PEP 446)."""
        return os.open(path, flags | getattr(os, "O_BINARY", 0), mode)

    # ------------------------------------------------------------ the host's transport

    def connect(self, address: str, timeout: float | None, plain: bool = False) -> socket.socket:
        """A connected stream to the host serving `address`; OSError as connect raises it.

        `plain`: the caller needs only what one request takes (settimeout, sendall, recv,
        getsockopt, close, family), so a Unix socket may be the bare `_socket.socket`: the
        socket module's import (its enums, selectors) is ~1.5 ms of every CLI call to a host
        (issue 26). Without it, always a `socket.socket` (a context manager, makefile)."""
        raise self._unsupported("reach a session's host")

    def listen(self, address: str) -> socket.socket:
        """A non-blocking listening stream at `address`, reachable by this user only."""
        raise self._unsupported("serve a session")

    def peer_user(self, conn: socket.socket) -> int | None:
        """The user at the other end of a connected stream; None where the kernel cannot say."""
        return None

    def transport(self) -> str:
        """What a host started now would serve its session on: `unix` or `loopback`."""
        raise self._unsupported("serve a session")

    def gate(self, server: socket.socket, conn: socket.socket) -> loopback.Gate | None:
        """The handshake (loopback.Gate) that `conn`, accepted on `server`, must pass before
        the host reads a request from it; None when the transport needs none."""
        if getattr(server, "secret", None) is None:
            return None  # a Unix socket: its private folder and the peer's uid are the guard
        from agent_tty.platform import loopback

        return loopback.gate_for(server, conn)

    def _unsupported(self, what: str) -> AgentTtyError:
        return AgentTtyError(
            ErrorCode.PLATFORM_UNAVAILABLE, f"cannot {what} on {sys.platform}: {self.reason}", platform=sys.platform
        )


class PosixSystem(System):
    """Linux, macOS and the BSDs: uids, Unix sockets, new sessions."""

    name = "posix"
    supported = True
    reason = "POSIX"
    dir_fds = True
    socket_path_max = 107  # sun_path holds 108 bytes with the final NUL

    def user(self) -> int:
        return os.geteuid()

    def is_admin(self) -> bool:
        return os.geteuid() == 0

    def user_name(self, user: UserId) -> str:
        try:
            import pwd

            return pwd.getpwuid(int(user)).pw_name
        except (ImportError, KeyError, ValueError):
            return str(user)

    def access(self, path: str, info: os.stat_result) -> Access:
        from agent_tty.platform.access import posix_access

        return posix_access(info)

    def owner(self, path: str, info: os.stat_result) -> int:
        return info.st_uid

    def fd_owner(self, fd: int, info: os.stat_result) -> int:
        return info.st_uid

    def temp_root(self) -> str | None:
        return "/tmp"

    def fix_writable(self, path: str) -> str:
        return f"fix it with `chmod go-w {path}` or use a private Home (--home)"

    def become(self, user: int, group: int) -> None:
        """Drop to `user` with its primary group and supplementary groups (its passwd entry),
        or `group` alone for a uid without one."""
        try:
            import pwd

            entry = pwd.getpwuid(user)
            groups, group = os.getgrouplist(entry.pw_name, entry.pw_gid), entry.pw_gid
        except KeyError:
            groups = [group]
        os.setgroups(groups)
        os.setgid(group)
        os.setuid(user)

    def detached(self) -> dict[str, Any]:
        return {"start_new_session": True}

    def foreground(self, terminal_fd: int) -> tuple[int, str | None] | None:
        try:
            group = os.tcgetpgrp(terminal_fd)
        except OSError:
            return None
        if not sys.platform.startswith("linux"):
            return group, None  # macOS has no /proc; asking ps would cost a process per run
        try:
            with open(f"/proc/{group}/comm", encoding="utf-8", errors="replace") as comm:
                return group, comm.read().strip() or None
        except OSError:
            return group, None

    def terminal_echoes(self, terminal_fd: int) -> bool | None:
        import termios

        try:
            return bool(termios.tcgetattr(terminal_fd)[3] & termios.ECHO)
        except (OSError, termios.error):
            return None

    def process_limit(self) -> str | None:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_NPROC)
        shown = "unlimited" if soft == resource.RLIM_INFINITY else str(soft)
        return f"RLIMIT_NPROC (`ulimit -u`) {shown} for this user, a pids cgroup's pids.max, or kernel.pid_max"

    def terminal_check(self) -> dict[str, Any]:
        try:
            controller, terminal = os.openpty()
        except OSError as err:
            return {"ok": False, "reason": str(err)}
        os.close(controller)
        os.close(terminal)
        return {"ok": True}

    def transport(self) -> str:
        chosen = os.environ.get(TRANSPORT_ENV) or "unix"
        if chosen not in ("unix", "loopback"):
            raise AgentTtyError(
                ErrorCode.INVALID_INPUT, f"invalid {TRANSPORT_ENV}={chosen!r}: unix or loopback", setting=TRANSPORT_ENV
            )
        return chosen

    def connect(self, address: str, timeout: float | None, plain: bool = False) -> socket.socket:
        if plain:
            sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        else:
            import socket  # here, not at the top: a command's one request to a host asks `plain`

            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(address)
        except OSError as err:
            sock.close()
            # A connect to a regular file: Linux refuses it (ECONNREFUSED), BSD kernels say
            # ENOTSOCK. When that file is a loopback host's address, follow it.
            from agent_tty.platform import loopback

            if not isinstance(err, (TimeoutError, BlockingIOError)) and loopback.is_address_file(address):
                return loopback.connect(address, timeout, self.user())
            raise
        except BaseException:
            sock.close()
            raise
        return sock

    def listen(self, address: str) -> socket.socket:
        if self.transport() == "loopback":
            from agent_tty.platform import loopback

            return loopback.listen(address, LISTEN_BACKLOG)
        try:
            os.unlink(address)
        except FileNotFoundError:
            pass
        import socket

        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(address)
            os.chmod(address, 0o600)
            server.listen(LISTEN_BACKLOG)
            server.setblocking(False)
        except BaseException:
            server.close()
            raise
        return server

    def peer_user(self, conn: socket.socket) -> int | None:
        # _socket's constants: `conn` may be a plain socket (connect's `plain`), whose family is an int.
        option = getattr(_socket, "SO_PEERCRED", None)  # Linux; getpeereid elsewhere
        if option is not None and conn.family == _socket.AF_UNIX:  # a loopback port's proof is its handshake
            import struct

            _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(_socket.SOL_SOCKET, option, struct.calcsize("3i")))
            return int(uid)
        return None


class WindowsSystem(System):
    """Windows: the windows_conpty plugin runs programs; hosts serve an authenticated loopback
    port (no AF_UNIX in CPython on Windows)."""

    name = "windows"
    supported = True
    reason = "Windows has no form of this step (sessions run through the windows_conpty plugin)"

    def user(self) -> str:
        from agent_tty.platform import win32_files

        return win32_files.user_sid()

    def access(self, path: str, info: os.stat_result) -> Access:
        from agent_tty.platform import win32_files

        return win32_files.access(path, self.user())

    def fd_owner(self, fd: int, info: os.stat_result) -> str:
        from agent_tty.platform import win32_files

        return win32_files.fd_owner(fd)

    def open_file(self, path: str, flags: int, mode: int) -> int:
        from agent_tty.platform import win32_files

        return win32_files.open_file(path, flags, self.user())

    def mkdir_private(self, path: str) -> None:
        from agent_tty.platform import win32_files

        win32_files.mkdir_private(path, self.user())

    def replace(self, source: str, target: str) -> None:
        from agent_tty.platform import win32_files

        win32_files.replace(source, target)

    def terminal_check(self) -> dict[str, Any]:
        import ctypes

        try:
            ctypes.WinDLL("kernel32").CreatePseudoConsole  # type: ignore[attr-defined]  # noqa: B018 - the lookup is the probe
        except (AttributeError, OSError):
            return {"ok": False, "reason": "no ConPTY here (CreatePseudoConsole: Windows 10 1809 or newer)"}
        return {"ok": True}

    def fix_writable(self, path: str) -> str:
        return f'use a Home under your profile (the default, %USERPROFILE%\\.agent-tty), or take other users\' entries off {path} (`icacls "{path}"` lists them)'

    def transport(self) -> str:
        return "loopback"  # CPython on Windows has no AF_UNIX

    def connect(self, address: str, timeout: float | None, plain: bool = False) -> socket.socket:
        from agent_tty.platform import loopback

        return loopback.connect(address, timeout, self.user())

    def listen(self, address: str) -> socket.socket:
        from agent_tty.platform import loopback

        return loopback.listen(address, LISTEN_BACKLOG)

    def detached(self) -> dict[str, Any]:
        # No console of its own (no window, no ^C from the caller's console), its own group.
        import subprocess

        flags = getattr(subprocess, "DETACHED_PROCESS", 0x8) | getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200)
        return {"creationflags": flags}


@cache
def current() -> System:
    if sys.platform == "win32":
        return WindowsSystem()
    # _socket, the socket module's C half, answers whether there are Unix sockets without the
    # socket module's import (its enums, selectors): every command asks, few connect.
    if hasattr(os, "geteuid") and hasattr(_socket, "AF_UNIX"):
        return PosixSystem()
    return System()
