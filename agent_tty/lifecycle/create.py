"""create: launch the host first, record it, then wait until it serves (R1, R2, R6, R17)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from agent_tty.lifecycle.engine import Engine
from agent_tty.lifecycle.refusals import limit_reached, process_refused, storage_refused
from agent_tty.platform.system import current
from agent_tty.protocol import rpc
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.protocol.status import Status, is_terminal
from agent_tty.storage.files import write_marker, write_record
from agent_tty.storage.files import remove_session_folder
from agent_tty.storage.home import SessionPaths, ensure_socket_dir, new_session_id, socket_path_in
from agent_tty.storage.records import HostRecord, Manifest

READY_TIMEOUT_S = 5.0
TIMEOUT_ENV = "AGENT_TTY_CREATE_TIMEOUT_S"
_HOST_ENV_DROPPED = ("AGENT_TTY_DESTROY_RERUN",)


@dataclass(frozen=True)
class CreateRequest:
    argv: tuple[str, ...]
    cols: int = 80
    rows: int = 24
    name: str | None = None
    cwd: str | None = None
    env: dict[str, str] | None = None
    term: str = "xterm-256color"
    idle_timeout_ms: int | None = None


class HostLaunch:
    """The launched host, signalled only through its own handle: once it has been reaped,
    a pid that another process took never gets the signal."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process

    @property
    def pid(self) -> int:
        return self.process.pid

    def exited(self) -> bool:
        return self.process.poll() is not None

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)  # no-op once reaped


def _allocate(engine: Engine) -> SessionPaths:
    for _ in range(16):
        paths = engine.home.session(new_session_id())
        try:
            current().mkdir_private(str(paths.folder))  # ours also for an elevated Windows admin
        except FileExistsError:
            continue
        except OSError as err:
            raise AgentTtyError(
                ErrorCode.STORAGE_ERROR, f"cannot create {paths.folder}: {err.strerror}", path=str(paths.folder)
            ) from None
        return paths
    raise AgentTtyError(ErrorCode.INTERNAL_ERROR, "could not allocate a unique session id")


def host_env() -> dict[str, str]:
    """The environment a host gets: ours (the program inherits it), less our own markers."""
    return {k: v for k, v in os.environ.items() if k not in _HOST_ENV_DROPPED}


def _launch_host(paths: SessionPaths, home: str) -> HostLaunch:
    return HostLaunch(start_host_process([paths.session_id, str(os.getpid()), home], subprocess.DEVNULL, host_env()))


def start_host_process(args: list[str], stdin: int, env: dict[str, str], stdout: int = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    """`python -m agent_tty.host ARGS`, detached: it must outlive us and our caller's terminal."""
    return subprocess.Popen(
        [sys.executable, "-m", "agent_tty.host", *args],
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.DEVNULL,
        **current().detached(),
        close_fds=True,
        env=env,
        cwd="/",
    )


Launcher = Callable[[SessionPaths, str], HostLaunch]
"""Starts the host of a new session (paths, Home): a fresh process, or a spare one."""


def create(engine: Engine, request: CreateRequest, launch: Launcher | None = None) -> Manifest:
    limit = ready_timeout()
    current().transport()  # a bad AGENT_TTY_TRANSPORT is the caller's error, before anything is made
    platform = engine.platform
    chosen = platform.choose()
    engine.home.ensure()
    sockets = ensure_socket_dir(engine.home.root)
    paths = _allocate(engine)
    now = time.time()
    manifest = Manifest(
        version=1,
        session_id=paths.session_id,
        status=Status.RUNNING,
        argv=request.argv,
        cols=request.cols,
        rows=request.rows,
        created_at=now,
        updated_at=now,
        socket_path=socket_path_in(sockets, paths.session_id),
        name=request.name,
        cwd=request.cwd,
        env=dict(request.env or {}),
        term=request.term,
        idle_timeout_ms=request.idle_timeout_ms,
        mechanism=chosen.name,
    )
    # CreateRecordsHostPid: launch first, so the first manifest already names the host.
    try:
        host = (launch or _launch_host)(paths, str(engine.home.root))
    except OSError as err:
        # No host started and no manifest names the folder: nothing else reads it.
        _remove_unnamed(paths)
        refused = process_refused(err, "cannot start the session host")
        if refused is None:
            raise
        raise refused from None
    named = False
    try:
        # CreateRecordsHost: a CLI in another pid space reads the host through host.json.
        identity = platform.capture_host(chosen.name, host.pid)
        if identity is not None:
            write_record(paths.host, HostRecord(version=1, mechanism=chosen.name, pid=host.pid, identity=identity))
        engine.write_manifest(paths, manifest.replace(host_pid=host.pid))
        named = True
        return _wait_ready(engine, paths, manifest.socket_path, host, limit)
    except AgentTtyError as err:
        _give_up(paths, host, named)
        raise err.with_details(sessionId=paths.session_id) from None
    except BaseException:
        _give_up(paths, host, named)
        raise


def _give_up(paths: SessionPaths, host: HostLaunch, named: bool) -> None:
    """CreateStopsOnGiveUp + HostChecksCreateFailed: the marker first, then SIGTERM through
    the launch handle; the host stops its program and records destroyed."""
    try:
        write_marker(paths.create_failed_marker)
    except AgentTtyError:
        pass
    host.stop()
    if not named:
        # No manifest ever named this host, so it never spawned anything and nothing else
        # reads this folder: once the host has ended, remove it (gc skips manifest-less ones).
        try:
            host.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return
        _remove_unnamed(paths)


def _remove_unnamed(paths: SessionPaths) -> None:
    try:
        remove_session_folder(paths.folder.parent, paths.session_id)
    except OSError:
        pass


def ready_timeout() -> float:
    raw = os.environ.get(TIMEOUT_ENV)
    if raw is None:
        return READY_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < 3600:
        raise AgentTtyError(ErrorCode.INVALID_INPUT, f"invalid {TIMEOUT_ENV}={raw!r}: seconds between 0 and 3600")
    return value


def _wait_ready(engine: Engine, paths: SessionPaths, socket_path: str, host: HostLaunch, limit: float) -> Manifest:
    deadline = time.monotonic() + limit
    delay = 0.002
    while True:
        if os.path.exists(socket_path):
            try:
                rpc.call(socket_path, {"op": "ping"}, timeout=1.0, session_id=paths.session_id)
                return engine.read_manifest(paths)
            except AgentTtyError as err:
                if err.code not in (ErrorCode.HOST_UNREACHABLE, ErrorCode.HOST_TIMEOUT):
                    raise
        if host.exited():
            refused = storage_refused(host.process.returncode, paths.folder)
            if refused is not None:
                raise refused
            manifest = engine.read_manifest(paths)
            if manifest.failure is not None and manifest.failure.reason == "spawn-failed":
                raise AgentTtyError(ErrorCode.INVALID_INPUT, manifest.failure.message, reason="spawn-failed")
            if manifest.failure is not None and manifest.failure.reason == "resource-limit":
                raise AgentTtyError(
                    ErrorCode.RESOURCE_LIMIT,
                    f"{manifest.failure.message}{limit_reached()}; nothing was left running",
                    reason="resource-limit",
                )
            if manifest.failure is not None and manifest.failure.reason == "host-start-failed":
                raise AgentTtyError(
                    ErrorCode.HOST_UNREACHABLE,
                    f"{manifest.failure.message} (the program was stopped; host.log in {paths.folder})",
                    reason="host-start-failed",
                )
            if is_terminal(manifest.status) and manifest.child_pid is not None:
                return manifest  # the program ran and has already ended: still a created session
            raise AgentTtyError(ErrorCode.HOST_UNREACHABLE, "the session host ended before it served the session")
        if time.monotonic() >= deadline:
            raise AgentTtyError(
                ErrorCode.HOST_UNREACHABLE, f"the session host did not answer within {limit:g} s"
            )
        time.sleep(delay)
        delay = min(delay * 1.5, 0.02)
