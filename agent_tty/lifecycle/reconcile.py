"""Reconcile: record the end of a session whose host died, and only then (R2, R4, R13, R18)."""

from __future__ import annotations

import time

from agent_tty.frozen import Frozen
from agent_tty.lifecycle.engine import Engine, unlink_socket
from agent_tty.protocol.errors import not_found
from agent_tty.protocol.status import Status, is_terminal
from agent_tty.storage.files import exists
from agent_tty.storage.home import SessionPaths
from agent_tty.storage.records import Failure, Manifest

HOST_DEATH = Failure(reason="host-death", message="the session host process died unexpectedly")


class Reconciled(Frozen):
    __slots__ = ("manifest", "host")
    manifest: Manifest
    host: str | None
    """The host verdict the reconcile read ("alive", "dead", "unknown"), None for a terminal session."""


def reconcile(engine: Engine, paths: SessionPaths, manifest: Manifest) -> Reconciled:
    if is_terminal(manifest.status):
        return Reconciled(repair_marked(engine, paths, manifest), None)
    verdict = engine.judge_host(paths, manifest)
    if verdict.value != "dead":
        return Reconciled(manifest, verdict.value)  # R2: failed only on proof of death

    # ReconcileRereads: the host may have written its exit record and ended since our read.
    again = _reread(engine, paths)
    if is_terminal(again.status):
        return Reconciled(repair_marked(engine, paths, again), "dead")
    # KillsProgramGroup, ReconcileWaitsForGroup: kill the proven group and write nothing
    # while it still runs, so the manifest keeps naming it (R13).
    group = engine.group(paths)
    if engine.unprovable(paths, again, group) or not engine.stop_group_and_wait(group):
        return Reconciled(again, "dead")
    last = _reread(engine, paths)
    if is_terminal(last.status):
        return Reconciled(repair_marked(engine, paths, last), "dead")
    now = time.time()
    if last.exit_code is not None or last.exit_signal is not None:
        # ReconcileRecordsExit (R4): the host recorded the program's exit (exiting) and died
        # while it waited for what the program left; the outcome is known: exited.
        ended = last.replace(status=Status.EXITED, updated_at=now, ended_at=now)
    else:
        ended = last.replace(status=Status.FAILED, updated_at=now, ended_at=now, failure=HOST_DEATH)
    written = engine.write_manifest(paths, ended)
    unlink_socket(written)
    # ReconcileRepairsDestroyed: a destroy that wrote its marker while we waited chose
    # destroyed; our write may have replaced its record, so write destroyed again.
    if exists(paths.destroyed_marker):
        return Reconciled(engine.record_destroyed(paths, last), "dead")
    return Reconciled(written, "dead")


def _reread(engine: Engine, paths: SessionPaths) -> Manifest:
    try:
        return engine.read_manifest(paths)
    except FileNotFoundError:
        raise not_found(paths.session_id) from None


def repair_marked(engine: Engine, paths: SessionPaths, manifest: Manifest) -> Manifest:
    """ReconcileRepairsMarked: a terminal manifest beside the destroyed marker was meant to be
    destroyed (a reconcile that replaced it died before its repair)."""
    if manifest.status is Status.DESTROYED or not exists(paths.destroyed_marker):
        return manifest
    return engine.record_destroyed(paths, manifest)
