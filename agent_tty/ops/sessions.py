"""Sessions of a Home: create, list, inspect."""

from __future__ import annotations

from agent_tty.ops.names import CLI, Names

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command ~2 ms at start-up (issue 26)
    from typing import Any

    from agent_tty.lifecycle.create import Launcher
    from agent_tty.lifecycle.engine import Engine


def create(
    engine: Engine,
    argv: list[str],
    *,
    name: str | None = None,
    cols: int = 80,
    rows: int = 24,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    term: str = "xterm-256color",
    idle_timeout_ms: int | None = None,
    launch: Launcher | None = None,
    names: Names = CLI,
) -> dict[str, Any]:
    """Start `argv` in a new session; `cwd` None is the caller's directory; `launch` starts its
    host (default: a fresh process; agent_tty.api passes a spare one). Errors name the
    parameters as `names` spells them."""
    import os

    from agent_tty.lifecycle.create import CreateRequest
    from agent_tty.lifecycle.create import create as create_session
    from agent_tty.protocol.errors import invalid
    from agent_tty.protocol.values import check_launch_text, check_size, check_text

    if not argv:
        raise invalid("give the program to run")
    check_size(cols, rows)
    check_launch_text(list(argv), dict(env or {}), "" if cwd is None else cwd, term)
    # Like a shell: the program starts in the caller's directory, and a relative program path
    # means the caller's (the host itself runs in /).
    directory = os.path.abspath(cwd) if cwd is not None else os.getcwd()
    check_text("working directory", directory)
    if not os.path.isdir(directory):
        raise invalid(f"{names.of('cwd')} {cwd!r} is not a directory", value=cwd)
    program = list(argv)
    if "/" in program[0] and not os.path.isabs(program[0]):
        program = [os.path.join(directory, program[0]), *program[1:]]
    if idle_timeout_ms is not None and idle_timeout_ms <= 0:
        raise invalid(f"{names.of('idle_timeout')} must be more than 0", value=idle_timeout_ms)
    request = CreateRequest(
        argv=tuple(program),
        cols=cols,
        rows=rows,
        name=name,
        cwd=directory,
        env=dict(env or {}),
        term=term,
        idle_timeout_ms=idle_timeout_ms,
    )
    if name is not None:
        from agent_tty.ops.resolve import check_name_is_free

        check_name_is_free(engine, name, names)
    manifest = create_session(engine, request, launch)
    return {
        "sessionId": manifest.session_id,
        "status": manifest.status.value,
        "hostPid": manifest.host_pid,
        "childPid": manifest.child_pid,
        "cols": manifest.cols,
        "rows": manifest.rows,
        "mechanism": manifest.mechanism,
        "name": manifest.name,
    }


def list_sessions(engine: Engine, all_: bool = False) -> tuple[dict[str, Any], list[Any]]:
    """The result, and the manifests it shows (for a table)."""
    from agent_tty.ops.view import summary
    from agent_tty.lifecycle.incomplete import incomplete
    from agent_tty.lifecycle.reconcile import reconcile
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode
    from agent_tty.protocol.status import is_active

    sessions = []
    unreadable = []
    leftovers = []
    for session_id in engine.home.session_ids():
        paths = engine.home.session(session_id)
        try:
            try:
                read = engine.read_manifest(paths)
            except AgentTtyError as err:
                if err.code is not ErrorCode.SESSION_NOT_FOUND:
                    raise
                # No manifest (or no folder: then incomplete says SESSION_NOT_FOUND too).
                found = incomplete(paths)
                if found is not None:
                    if all_:
                        leftovers.append(found.summary())  # a create or gc died half-way
                    continue
                read = engine.read_manifest(paths)  # a create wrote it since
            # Active sessions are checked for a dead host; ended ones only for a destroyed
            # marker beside another status (ReconcileRepairsMarked), which costs one stat.
            manifest = reconcile(engine, paths, read).manifest
        except AgentTtyError as err:
            if err.code is ErrorCode.SESSION_NOT_FOUND:
                continue  # removed while we listed
            unreadable.append({"sessionId": session_id, "code": err.code.value, "message": err.message})
            continue
        except Exception as err:  # noqa: BLE001 - one broken session must not hide the others
            unreadable.append({"sessionId": session_id, "code": "INTERNAL_ERROR", "message": f"{type(err).__name__}: {err}"})
            continue
        if all_ or is_active(manifest.status):
            sessions.append(manifest)
    sessions.sort(key=lambda m: m.created_at)
    result = {"sessions": [summary(m) for m in sessions], "unreadable": unreadable, "incomplete": leftovers}
    return result, sessions


def inspect(engine: Engine, session_id: str) -> dict[str, Any]:
    """The whole manifest (reconciled) plus derived facts."""
    import time

    from agent_tty.lifecycle.reconcile import reconcile
    from agent_tty.storage.files import exists
    from agent_tty.storage.space import home_space

    paths = engine.home.session(session_id)
    reconciled = reconcile(engine, paths, engine.read_manifest(paths))
    manifest = reconciled.manifest
    result = manifest.to_obj()
    result["derived"] = {
        "folder": str(paths.folder),
        "socketPath": manifest.socket_path,
        "mechanism": manifest.mechanism,
        "ageSeconds": round(time.time() - manifest.created_at, 3),
        "host": reconciled.host,
        "destroyedMarker": exists(paths.destroyed_marker),
        "createFailedMarker": exists(paths.create_failed_marker),
    }
    # A full disk: the host keeps the session running but cannot record all of it.
    space = home_space(engine.home.root)
    if space is not None:
        result["derived"]["homeFreeBytes"] = space.free_bytes
        result["derived"]["homeNearlyFull"] = space.nearly_full
    return result


def gc(engine: Engine, dry_run: bool = False, older_than_s: float | None = None, stale_only: bool = False) -> dict[str, Any]:
    """Remove collectable sessions (never a live one); what was removed and what was kept, why."""
    from agent_tty.lifecycle.gc import GcOptions
    from agent_tty.lifecycle.gc import gc as collect

    report = collect(engine, GcOptions(dry_run=dry_run, older_than_s=older_than_s, stale_only=stale_only))
    result: dict[str, Any] = {"removedSessions": report.removed, "skippedSessions": report.skipped, "dryRun": dry_run}
    if report.sweep_errors:
        result["sweepErrors"] = report.sweep_errors
    return result
