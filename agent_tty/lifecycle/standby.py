"""A spare host, started ahead of a long-lived client's next create.

A new host is a new interpreter: its start-up and imports (the screen engine alone ~150 ms) are
most of what `create` and the first command wait for. A client that stays (agent_tty.api, the MCP
server) keeps one spare host process that has paid them and waits, on a pipe, for the one line
that names its session; from there it runs exactly as a freshly launched host (host/main.py
`standby_main`), so no lifecycle step changes: create still launches before its first manifest
write and records that pid (CreateRecordsHostPid), and the host still waits for that manifest.

A spare is used only once it says it is warm (else create launches a fresh host and the spare
waits for the next one), only by the process that started it and only while the environment it was
started with and every other inherited fact (credentials, groups, rlimits, no_new_privs, seccomp,
capabilities, nice, umask, cgroup, namespaces, LSM label: platform/inherited.py) are still ours,
since the program inherits them; otherwise it is closed and the host is launched fresh. Closing its pipe ends a spare that has no session; it ends the same way when
its client exits.

Hosts a client launched are its children: one that ends stays a zombie until subprocess reaps it
at the client's next process start. A zombie is a dead host to every check (HostVerdict.DEAD).
"""

from __future__ import annotations

import os
import subprocess
import threading
from typing import Any

from agent_tty.host.main import STANDBY_READY
from agent_tty.lifecycle.create import HostLaunch, _launch_host, host_env, start_host_process
from agent_tty.platform.inherited import inherited_facts
from agent_tty.storage.home import SessionPaths


class SpareHost:
    """At most one spare host for one Home; thread-safe (one create takes it)."""

    def __init__(self, home: str) -> None:
        self.home = home
        self._lock = threading.Lock()
        _forget_in_forked_child(self)
        self._process: subprocess.Popen[bytes] | None = None
        self._env: dict[str, str] | None = None
        self._facts: dict[str, Any] | None = None
        self._owner = 0
        self._ready = False

    def launch(self, paths: SessionPaths, home: str) -> HostLaunch:
        """create's launcher: the spare if it is still fit, else a fresh host."""
        process = self._take(home)
        if process is not None:
            try:
                assert process.stdin is not None
                process.stdin.write(paths.session_id.encode() + b"\n")
                process.stdin.close()
                return HostLaunch(process)
            except OSError:  # it died meanwhile (it never touched the Home)
                _reap(process)
        return _launch_host(paths, home)

    def refill(self) -> None:
        """Start the next spare unless there is one (a few ms: a fork and an exec)."""
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                return
            env, facts = host_env(), inherited_facts()
            self._process = start_host_process(["--standby", str(os.getpid()), self.home], subprocess.PIPE, env, stdout=subprocess.PIPE)
            self._env, self._facts, self._owner, self._ready = env, facts, os.getpid(), False

    def wait_ready(self, timeout: float) -> bool:
        """Whether the spare is warm, waiting up to `timeout` seconds for it."""
        with self._lock:
            return self._process is not None and self._is_ready(self._process, timeout)

    def _is_ready(self, process: subprocess.Popen[bytes], timeout: float = 0.0) -> bool:
        """The spare said READY (host/main.py standby_main); called with the lock held."""
        import select

        if not self._ready and process.stdout is not None:
            try:
                readable, _, _ = select.select([process.stdout], [], [], timeout)
                if readable:
                    self._ready = process.stdout.readline() == STANDBY_READY
                    process.stdout.close()  # it said all it says; EOF means it died
            except (OSError, ValueError):
                return False
        return self._ready

    def forget_after_fork(self) -> None:
        """In a forked child: the spare is the parent's child, not ours. Our copies of its pipes
        are closed (else a forked worker would keep a spare alive after its client died) and it
        is forgotten; the lock is new, since a parent thread may have held it at the fork."""
        self._lock = threading.Lock()
        process, self._process = self._process, None
        if process is None:
            return
        for pipe in (process.stdin, process.stdout):
            try:
                if pipe is not None:
                    pipe.close()  # our copy only: nothing is buffered (launch writes, then closes)
            except (OSError, ValueError):
                pass
        process.returncode = 0  # never waited for or signalled from here

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
        if process is not None:
            _reap(process)

    def _take(self, home: str) -> subprocess.Popen[bytes] | None:
        with self._lock:
            if self._process is not None and self._process.poll() is None and not self._is_ready(self._process):
                return None  # still warming up: launch fresh now, keep it for the next create
            process, self._process = self._process, None
            fit = (
                process is not None
                and process.poll() is None
                and home == self.home
                and self._owner == os.getpid()  # a forked copy of the client is not its parent
                and self._env == host_env()
                and self._facts == inherited_facts()  # a caller that dropped a privilege since
            )
        if process is not None and not fit:
            _retire(process)
            return None
        return process


_SPARES: Any = None
"""Every live SpareHost of this process (a WeakSet), for the reset in a forked child."""


def _forget_in_forked_child(spare: SpareHost) -> None:
    global _SPARES
    if _SPARES is None:
        import weakref

        _SPARES = weakref.WeakSet()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=lambda: [kept.forget_after_fork() for kept in list(_SPARES)])
    _SPARES.add(spare)


def _retire(process: subprocess.Popen[bytes]) -> None:
    """Let a spare that no longer fits end on its own (subprocess reaps it at a later Popen)."""
    try:
        if process.stdin is not None:
            process.stdin.close()
    except OSError:
        pass


def _reap(process: subprocess.Popen[bytes]) -> None:
    """End a spare that has no session: end of input is its signal to exit."""
    try:
        if process.stdin is not None:
            process.stdin.close()
    except OSError:
        pass
    try:
        process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        process.kill()  # our own child, by its handle; it has touched nothing
        process.wait()
