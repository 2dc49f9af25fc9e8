"""The host's start-up: every step in the order the lifecycle rules need it."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agent_tty.host.signals import HostSignals
from agent_tty.lifecycle.refusals import PROCESS_REFUSALS, storage_exit
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.protocol.status import Status
from agent_tty.storage.files import FolderGone, exists, read_record, write_record
from agent_tty.storage.home import Home, SessionPaths, trusted_socket_path
from agent_tty.storage.records import Failure, HostRecord, Manifest, ProgramRecord

if TYPE_CHECKING:
    from agent_tty.host.loop import Host
    from agent_tty.host.writer import ManifestWriter

# Variables of ours that the program must not inherit: the destroy re-run marker would make
# a destroy the program runs skip its inside check (ReRunsInNewSession).
_DROPPED_ENV = ("AGENT_TTY_DESTROY_RERUN",)


def wait_for_manifest(paths: SessionPaths, create_pid: int, signals: HostSignals) -> Manifest | None:
    """Wait for create's first manifest for as long as create lives (HostWaitsForManifest).

    create launches the host before that write, so it can start first. A manifest that
    names another pid is not ours: return None and start nothing.
    """
    delay = 0.001
    while True:
        if signals.term:
            return None
        parent_alive = os.getppid() == create_pid
        try:
            manifest = read_record(paths.manifest, Manifest)
        except FileNotFoundError:
            manifest = None
        except AgentTtyError:
            return None
        if manifest is not None:
            return manifest if manifest.host_pid == os.getpid() else None
        if not parent_alive:
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.01)


RUN_HISTORY_PATTERN = "*7770;%s;%s*"
"""A line that `run` typed (its completion postamble), as a shell pattern (ADR 0007)."""


def program_env(manifest: Manifest) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    env.update(manifest.env)
    env["TERM"] = manifest.term
    env["AGENT_TTY_SESSION_ID"] = manifest.session_id
    env.update(history_env(env))
    return env


def history_env(env: dict[str, str]) -> dict[str, str]:
    """Keep `run`'s lines out of the shell's history: bash's HISTIGNORE (read at start-up, so
    also with --norc; an rc file that sets it again wins) and zsh's HISTORY_IGNORE (the
    history file only), added to what the environment already asks for."""
    bash, zsh = env.get("HISTIGNORE"), env.get("HISTORY_IGNORE")
    return {
        "HISTIGNORE": f"{bash}:{RUN_HISTORY_PATTERN}" if bash else RUN_HISTORY_PATTERN,
        "HISTORY_IGNORE": f"({zsh}|{RUN_HISTORY_PATTERN})" if zsh else RUN_HISTORY_PATTERN,
    }


STANDBY = "--standby"
STANDBY_READY = b"ready\n"


def standby_main(argv: list[str]) -> int:
    """`python -m agent_tty.host --standby CREATE_PID HOME`: a spare host a long-lived client
    (agent_tty.api) starts ahead of its next create. It pays the interpreter's start-up and the
    host's imports now, then waits on stdin for the one line that names its session and runs as
    `main` would have from there. End of input (the client closed it, or exited) ends it before
    it has touched the Home. It says READY on stdout once warm, then lets go of that pipe: a
    client hands a create only to a warm spare."""
    if len(argv) != 2:
        print("usage: python -m agent_tty.host --standby CREATE_PID HOME", file=sys.stderr)
        return 2
    _warm_up()
    try:
        os.write(1, STANDBY_READY)
    except OSError:
        pass  # the client is gone: its end of stdin says so next
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the host never writes to the client's pipe
    os.close(devnull)
    line = sys.stdin.readline().strip()
    if not line:
        return 0
    return main([line, *argv])


def _warm_up() -> None:
    """What a new host pays before it serves its first command: the loop's imports, the
    platform plugins' probes (a cgroup leaf made and used: ~25 ms; plugins keep their verdict on
    what this process may do for its life, as a host would from its first spawn) and the screen
    engine's (pyghostty's import, its library's first screen and first render each cost tens to
    hundreds of ms). A throwaway screen pays them; the session's own is built as always."""
    import agent_tty.host.loop  # noqa: F401
    from agent_tty.platform.manager import Platform
    from agent_tty.terminal.screen import open_screen, snapshot

    try:
        Platform(None).probes()
    except Exception:  # noqa: BLE001, S110 - the host's own spawn reports a plugin that cannot work
        pass

    try:
        screen = open_screen(80, 24)
        screen.feed(b"\x1b[1mwarm\x1b[0m\r\n")
        snapshot(screen, 0, structured=True, scrollback=True)
    except Exception:  # noqa: BLE001, S110 - the host reports a backend that cannot load when it builds its screen
        pass


_CALLER_UMASK: int | None = None
"""The mask the host was started with (its caller's, or a spare's caller's when it started)."""


def main(argv: list[str]) -> int:
    # CreateStopsOnGiveUp: the SIGTERM handler is in place before anything else, so a
    # create that gives up can always stop us, before or after the spawn.
    signals = HostSignals.install()
    global _CALLER_UMASK
    _CALLER_UMASK = os.umask(0o077)  # our files are private; the program gets the caller's mask
    try:
        session_id, create_pid, home = argv[0], int(argv[1]), Path(argv[2])
        paths = Home(home).session(session_id)
    except (IndexError, ValueError, AgentTtyError):
        print("usage: python -m agent_tty.host SESSION_ID CREATE_PID HOME", file=sys.stderr)
        return 2
    manifest = wait_for_manifest(paths, create_pid, signals)
    if manifest is None or manifest.mechanism is None:
        return 0
    host_pid = os.getpid()
    try:
        return _start(paths, manifest, signals, home)
    except AgentTtyError as err:
        if os.getpid() != host_pid:
            os._exit(127)
        if err.code is not ErrorCode.STORAGE_ERROR:
            log_crash(paths)
            raise
        # A start-up record it could not write, before any program ran (a full disk): the exit
        # status says why to the waiting create, since host.log may take no write either.
        log_reason(paths, err.message)
        return storage_exit(err)
    except BaseException:
        if os.getpid() != host_pid:
            os._exit(127)  # a forked child unwinding before exec: it must not act as the host
        log_crash(paths)  # whatever ends the host leaves its reason in host.log
        raise


def _could_not_start(writer: ManifestWriter, manifest: Manifest, err: OSError | AgentTtyError) -> int:
    """The program's spawn or exec failed: the session reads failed, with why."""
    message = getattr(err, "message", None) or f"{getattr(err, 'strerror', None) or err}: {manifest.argv[0]}"
    # A fork the system refused is its limit, not the program's fault (create: RESOURCE_LIMIT).
    reason = "resource-limit" if isinstance(err, OSError) and err.errno in PROCESS_REFUSALS else "spawn-failed"
    writer.write(
        status=Status.FAILED,
        host_pid=os.getpid(),
        ended_at=time.time(),
        failure=Failure(reason=reason, message=f"the program could not start: {message}"),
    )
    return 1


def _start_up_write(host: Host, paths: SessionPaths, write: Callable[[], object]) -> int | None:
    """A start-up record: None once written, else the host's exit status. A full disk or an
    unwritable folder at start-up: no record names the program as running, so it must not
    outlive us (abandon stops it through its proof; create reads why from our exit status)."""
    try:
        write()
    except FolderGone:
        host.abandon()
        return 1
    except AgentTtyError as err:
        log_crash(paths)
        host.abandon()
        return storage_exit(err) if err.code is ErrorCode.STORAGE_ERROR else 1
    return None


class ServingFailed(Exception):
    """An error after the session was served: a crash to log, not a start-up write's exit status."""


def _append_log(paths: SessionPaths, text: str) -> None:
    """Append to host.log in the session folder; never raises (on a full disk the text is lost,
    not the host's own shutdown)."""
    try:
        from agent_tty.storage import fs

        fd = fs.open_file(paths.folder / "host.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    except OSError:
        return
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    except OSError:
        pass
    finally:
        os.close(fd)


def log_crash(paths: SessionPaths) -> None:
    """The host has no terminal: its traceback goes to host.log."""
    import traceback

    _append_log(paths, f"host {os.getpid()} at {time.strftime('%Y-%m-%dT%H:%M:%S%z')}:\n{traceback.format_exc()}")


def log_reason(paths: SessionPaths, message: str) -> None:
    """One line in host.log: why the host stopped the session on its own."""
    _append_log(paths, f"host {os.getpid()} at {time.strftime('%Y-%m-%dT%H:%M:%S%z')}: {message}\n")


def _start(paths: SessionPaths, manifest: Manifest, signals: HostSignals, home: Path) -> int:
    from agent_tty.host.eventlog import EventLog
    from agent_tty.host.writer import ManifestWriter
    from agent_tty.platform.manager import Platform
    from agent_tty.platform.types import GroupRef, SpawnRequest

    mechanism = manifest.mechanism
    assert mechanism is not None
    platform = Platform(home)
    # ProvesHostPid: our identity, written again right after the manifest read (create
    # wrote it first from its own capture: CreateRecordsHost).
    identity = platform.capture_host(mechanism, os.getpid())
    if identity is not None:
        write_record(paths.host, HostRecord(version=1, mechanism=mechanism, pid=os.getpid(), identity=identity))
    events = EventLog.open(paths.events, manifest.session_id, manifest.cols, manifest.rows)
    writer = ManifestWriter(paths, manifest)

    # HostChecksCreateFailed, then the SIGTERM check: a create that gave up gets no program.
    if exists(paths.create_failed_marker) or signals.term:
        return 0
    request = SpawnRequest(
        mechanism=mechanism,
        argv=manifest.argv,
        env=program_env(manifest),
        cwd=manifest.cwd,
        cols=manifest.cols,
        rows=manifest.rows,
        session_id=manifest.session_id,
        home=str(home),
        umask=_CALLER_UMASK,
    )
    try:
        program = platform.spawn(request)
    except (OSError, AgentTtyError) as err:
        if os.getpid() != manifest.host_pid:
            os._exit(127)
        return _could_not_start(writer, manifest, err)

    # RecordsProgramSync: from the spawn to program.json the program is held at its start
    # (StartGate, released below), so a host that dies in between leaves no program running
    # that no file names. A plugin whose handle has no release() leaves that window open.
    captured = platform.capture_program(mechanism, program.pid, os.getpid())
    proof = captured.proof
    if proof is not None and identity is None and proof.get("autogroup") is not None:
        # UnsharedGroupReadsUnknown: a token is only recorded beside a host.json.
        proof = {**proof, "autogroup": None}
    group = GroupRef(
        mechanism=mechanism,
        pid=program.pid,
        proof=proof,
        folder=paths.folder,
        host_identity=identity,
        session_id=manifest.session_id,
    )
    events.append("start", argv=list(manifest.argv))
    from agent_tty.host.loop import Host
    from agent_tty.host.shutdown import Reason

    host = Host(paths, platform, writer, events, program, group, signals, manifest.idle_timeout_ms)
    ended = _start_up_write(host, paths, lambda: write_record(paths.program, ProgramRecord(version=1, mechanism=mechanism, pid=program.pid, proof=proof)))
    if ended is not None:
        return ended
    # StartGate: a program spawned held runs its own code only from here, once program.json
    # names it; a host that died before this line leaves nothing running.
    release = getattr(program, "release", None)
    if release is not None:
        try:
            release()
        except OSError as err:
            return _could_not_start(writer, manifest, err)
    ended = _start_up_write(host, paths, lambda: writer.write(status=Status.RUNNING, host_pid=os.getpid(), child_pid=program.pid))
    if ended is not None:
        return ended
    # HostChecksCreateFailed, second check: after our start-up write and before we listen.
    if exists(paths.create_failed_marker):
        host.shutdown.begin(Reason.CREATE_FAILED)
    try:
        host.listen(trusted_socket_path(manifest.socket_path, manifest.session_id))
    except (OSError, AgentTtyError) as err:
        # The program runs and nobody could reach it: say why, then stop it as a create
        # that gives up would (the group is killed through its proof, the record ends destroyed).
        detail = getattr(err, "message", None) or getattr(err, "strerror", None) or str(err)
        message = f"the host could not serve its socket {manifest.socket_path}: {detail}"
        log_reason(paths, message)
        host.shutdown.begin(Reason.CREATE_FAILED, Failure(reason="host-start-failed", message=message))
    try:
        return host.run()
    except FolderGone:
        return 1
    except AgentTtyError as err:
        host.abandon()  # main() logs the reason in host.log: a served session's error, not start-up's
        raise ServingFailed(err.message) from err
    except Exception:
        host.abandon()  # main() logs the reason in host.log
        raise


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))

