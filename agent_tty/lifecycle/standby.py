"""A spare host, started ahead of a long-lived client's next create.

A new host is a new interpreter: its start-up and imports (the screen engine alone ~150 ms) are
most of what `create` and the first command wait for. A client that stays (agent_tty.api, the MCP
server) keeps one spare host process that has paid them and waits, on a pipe, for the one line
that names its session; from there it runs exactly as a freshly launched host (host/main.py
`standby_main`), so no lifecycle step changes: create still launches before its first manifest
write and records that pid (CreateRecordsHostPid), and the host still waits for that manifest.

A spare is used only once it says it is warm (else create launches a fresh host and the spare
waits for the next one), only by the process that started it and only while the environment it was
started with is still ours (the program inherits it); otherwise it is closed and the host is
launched fresh. Closing its pipe ends a spare that has no session; it ends the same way when
its client exits.

Hosts a client launched are its children: one that ends stays a zombie until subprocess reaps it
at the client's next process start. A zombie is a dead host to every check (HostVerdict.DEAD).
"""

from __future__ import annotations

import os
import subprocess
import threading

from agent_tty.host.main import STANDBY_READY
from agent_tty.lifecycle.create import HostLaunch, _launch_host, host_env, start_host_process
from agent_tty.storage.home import SessionPaths


class SpareHost:
    """At most one spare host for one Home; thread-safe (one create takes it)."""

    def __init__(self, home: str) -> None:
        self.home = home
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._env: dict[str, str] | None = None
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
            env = host_env()
            self._process = start_host_process(["--standby", str(os.getpid()), self.home], subprocess.PIPE, env, stdout=subprocess.PIPE)
            self._env, self._owner, self._ready = env, os.getpid(), False

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
            )
        if process is not None and not fit:
            _retire(process)
            return None
        return process


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
