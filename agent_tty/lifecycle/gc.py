"""gc: remove the folders of ended sessions, never one a host or a program still uses (R1, R20)."""

from __future__ import annotations

import errno
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agent_tty.lifecycle.engine import AMBIGUOUS_GROUP, POLL_S, Engine, unlink_socket, unreadable
from agent_tty.lifecycle.incomplete import Incomplete, incomplete, what_runs, why_kept
from agent_tty.lifecycle.reconcile import reconcile
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.protocol.status import Status, policy
from agent_tty.storage.files import exists, remove_session_folder
from agent_tty.storage.records import Manifest

if TYPE_CHECKING:
    from agent_tty.platform.types import GroupRef
    from agent_tty.storage.home import SessionPaths

RM_RETRY_DELAYS_S = (0.01, 0.02, 0.03)
"""A late write can land while rmtree runs (ENOTEMPTY at its last rmdir): remove again."""
GROUP_RUNS = "the session's program group still runs (destroy ends it)"


class KeptAmbiguous(Exception):
    """The group reads ambiguous (ADR 0026): gc keeps the folder, the only record that may
    prove those processes the program's (R20), and says what is unknown; destroy would refuse."""

    def __init__(self, pgid: int) -> None:
        super().__init__(
            AMBIGUOUS_GROUP.format(pgid=pgid)
            + f" (check them with `ps -o pid,sid,lstart,args -g {pgid}`; once they ended, gc removes the session)"
        )
HOST_END_WAIT_S = 2.0
"""How long gc waits for the host of an ended session to end after its last write."""


@dataclass(frozen=True)
class GcOptions:
    dry_run: bool = False
    older_than_s: float | None = None
    stale_only: bool = False


@dataclass
class GcReport:
    removed: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    sweep_errors: dict[str, str] = field(default_factory=dict)
    """Plugins whose sweep raised, and what: the other plugins' sweeps still ran."""

    def skip(self, session_id: str, reason: str) -> None:
        self.skipped.append({"sessionId": session_id, "reason": reason})


def gc(engine: Engine, options: GcOptions) -> GcReport:
    report = GcReport()
    for session_id in engine.home.session_ids():
        try:
            reason = _collect(engine, session_id, options)
        except KeptAmbiguous as kept:
            reason = str(kept)
        except AgentTtyError as err:
            if err.code.value == "SESSION_NOT_FOUND":
                continue  # another command removed it meanwhile
            reason = f"{err.code.value}: {err.message}"
            if err.code is ErrorCode.STORAGE_ERROR:
                reason = _way_out(engine, session_id, err) or reason
        except Exception as err:  # noqa: BLE001 - one broken session must not stop the others' collection
            reason = f"INTERNAL_ERROR: {type(err).__name__}: {err}"
        if reason is None:
            report.removed.append(session_id)
        else:
            report.skip(session_id, reason)
    if not options.dry_run and (report.removed or engine.home.session_ids()):
        # What a crashed host left for sessions whose folders are gone (an empty cgroup leaf).
        engine.platform.sweep(str(engine.home.root), engine.home.session_ids())
        report.sweep_errors = dict(engine.platform.sweep_errors)
    return report


def _way_out(engine: Engine, session_id: str, err: AgentTtyError) -> str | None:
    """ForceSkipsUnreadableGroup: gc names `destroy --force` only when the read and first check
    that destroy --force runs fail the same way (force_skips_group); with session.json
    unreadable, say, destroy --force fails too, and the reason is the error alone."""
    from agent_tty.lifecycle.destroy import force_skips_group
    from agent_tty.protocol.status import is_terminal

    from agent_tty.lifecycle.destroy import force_reaches_without_manifest

    paths = engine.home.session(session_id)
    try:
        manifest = engine.read_manifest(paths)
    except AgentTtyError as manifest_err:
        # ManifestlessForce: destroy --force goes on through host.json and program.json.
        if manifest_err.code is ErrorCode.STORAGE_ERROR and force_reaches_without_manifest(engine, paths):
            return f"cannot read its manifest (destroy --force stops it through host.json and program.json): {err.message}"
        return None
    if not unreadable(err) or not force_skips_group(engine, paths, manifest):
        return None
    # An active session fails in its reconcile (the host is dead); an ended one in gc's own check.
    what = "check the session's program group" if is_terminal(manifest.status) else "reconcile session"
    return f"failed to {what} (destroy --force removes it): {err.message}"


def _collect(engine: Engine, session_id: str, options: GcOptions) -> str | None:
    """None when the session was (or, dry, would be) removed; else why it stays."""
    paths = engine.home.session(session_id)
    found = incomplete(paths)
    if found is not None:
        return _collect_incomplete(engine, paths, found, options)
    try:
        first = engine.read_manifest(paths)
    except AgentTtyError as err:
        if err.code is not ErrorCode.STORAGE_ERROR or not exists(paths.destroyed_marker):
            raise
        return _collect_unreadable_destroyed(engine, paths, err, options)
    manifest = reconcile(engine, paths, first).manifest
    rules = policy(manifest.status)
    if rules.active:
        return f"session host is still alive ({manifest.status.value})"
    if not rules.collectable:
        return f"session is {manifest.status.value}"
    if options.stale_only and manifest.status is not Status.FAILED:
        return f"not stale: the session ended {manifest.status.value}"
    if options.older_than_s is not None:
        age = time.time() - _ended(manifest)
        if age < options.older_than_s:
            return f"ended {age:.0f} s ago, younger than {options.older_than_s:g} s"
    # GcKeepsLiveGroup (R20): program.json is the only proof that a leftover is the
    # program's, so keep the folder while a proven member runs. A destroy has already
    # waited its group out.
    if manifest.status is not Status.DESTROYED and _group_runs(engine, engine.group(paths)):
        return GROUP_RUNS
    # The final check: what we judged is still what the folder holds.
    last = engine.read_manifest(paths)
    if not policy(last.status).collectable:
        return f"session is {last.status.value}"
    # GcChecksTheLiving: an edited manifest may say ended while its host or group runs.
    kept = _kept_by_the_living(engine, paths, last)
    if kept is not None:
        return kept
    if options.dry_run:
        return None
    try:
        group = engine.group(paths)
    except AgentTtyError:
        group = None  # checked above; only the leaf's release needs it
    _remove(paths)
    unlink_socket(last)
    if group is not None:
        engine.platform.release_group(group)
    return None


def _collect_incomplete(engine: Engine, paths: SessionPaths, found: Incomplete, options: GcOptions) -> str | None:
    """A folder without a manifest goes once nothing of it can run (lifecycle/incomplete.py)."""
    reason = why_kept(engine, paths, found)
    if reason is not None:
        return reason
    if options.older_than_s is not None and found.age_s < options.older_than_s:
        return f"incomplete, changed {found.age_s:.0f} s ago, younger than {options.older_than_s:g} s"
    if options.dry_run:
        return None
    if exists(paths.manifest):
        return "a manifest appeared meanwhile: gc judges it next time"
    group = engine.group(paths)
    _remove(paths)
    if group is not None:
        engine.platform.release_group(group)
    return None


def _collect_unreadable_destroyed(engine: Engine, paths: SessionPaths, err: AgentTtyError, options: GcOptions) -> str | None:
    """A manifest that cannot be read beside a destroyed marker: what destroy --force leaves
    (ManifestlessForce). It goes once host.json and program.json prove nothing alive."""
    if options.stale_only:
        return "not stale: destroyed (its manifest cannot be read)"
    reason = what_runs(engine, paths, f"destroyed, with an unreadable manifest ({err.message})")
    if reason is not None or options.dry_run:
        return reason
    group = engine.group(paths)
    _remove(paths)
    if group is not None:
        engine.platform.release_group(group)
    return None


def _kept_by_the_living(engine: Engine, paths: SessionPaths, last: Manifest) -> str | None:
    """Why the records contradict the living, or None. host.json's host proven alive keeps the
    folder whatever the manifest says (R1): a host ends right after its terminal write (R7),
    so gc waits up to HOST_END_WAIT_S for it first. A host gc cannot judge (another pid space)
    does not keep an ended session, which no command could then remove. A destroyed status
    without the `destroyed` marker was written by no destroy, so no destroy waited its group
    out: gc judges that group as it does for exited and failed sessions (R20)."""
    host = engine.host_record(paths)
    if host is not None:
        deadline = time.monotonic() + HOST_END_WAIT_S
        while engine.platform.judge_host(host.mechanism, host.pid, host.identity).value == "alive":
            if time.monotonic() >= deadline:
                return f"the manifest says {last.status.value} but its host (pid {host.pid}) is alive"
            time.sleep(POLL_S)
    if last.status is Status.DESTROYED and not exists(paths.destroyed_marker):  # noqa: SIM102 - the model's two steps
        if _group_runs(engine, engine.group(paths)):
            return (
                "the manifest says destroyed but no destroy recorded it (no destroyed marker), "
                "and the session's program group still runs"
            )
    return None


def _group_runs(engine: Engine, group: GroupRef | None) -> bool:
    """A proven member runs (owned); or no member is in view but the id is still in use by
    something that is not only zombies (GcProbesUnseenGroup). A group gc cannot check
    (unknown, unshared) proves nothing: gc never keeps a session no command can remove. One
    whose processes may be the program's but cannot be told from a group that took the id
    (ambiguous) keeps it with that reason (KeptAmbiguous)."""
    if group is None:
        return False
    verdict = engine.platform.judge_group(group).value
    if verdict == "ambiguous":
        raise KeptAmbiguous(group.pid)
    if verdict == "owned":
        return True
    return verdict == "gone" and engine.platform.group_alive(group)


def _ended(manifest: Manifest) -> float:
    return manifest.ended_at or manifest.updated_at


def _remove(paths: SessionPaths) -> None:
    """Through a checked fd of sessions/, never by a path a swapped link could redirect."""
    for delay in (*RM_RETRY_DELAYS_S, None):
        try:
            remove_session_folder(paths.folder.parent, paths.session_id)
            return
        except FileNotFoundError:
            return
        except OSError as err:
            if err.errno != errno.ENOTEMPTY or delay is None:
                raise _storage(paths.folder, err) from None
            time.sleep(delay)


def _storage(folder: os.PathLike[str], err: OSError) -> AgentTtyError:
    from agent_tty.protocol.errors import storage_error

    return storage_error(f"cannot remove {folder}: {err.strerror}", str(folder))
