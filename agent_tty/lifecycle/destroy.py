"""destroy: end a session and report success only once it reads destroyed (R9, R11, R16, R18, R19)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_tty.lifecycle.engine import GROUP_WAIT_S, POLL_S, Engine, host_timeout, unprovable_error, unreadable
from agent_tty.lifecycle.reconcile import reconcile
from agent_tty.protocol import rpc
from agent_tty.protocol.errors import AgentTtyError, ErrorCode, not_found, storage_error
from agent_tty.protocol.status import Status, is_terminal
from agent_tty.storage.files import FolderGone, exists, read_bytes, read_optional
from agent_tty.storage.home import SessionPaths
from agent_tty.storage.records import Manifest, ProgramRecord
from agent_tty.storage.schema import RecordError

if TYPE_CHECKING:
    from agent_tty.platform.types import GroupRef

PLAIN_DESTROY_TIMEOUT_S = 10.0
"""The host's SIGHUP grace (2 s) plus its group wait (5 s), with room to spare."""
UNCHECKED_RETRY_S = 0.1
"""destroy --force reads an unreadable group twice, this far apart, before it goes on blind."""


@dataclass(frozen=True)
class DestroyOutcome:
    manifest: Manifest | None
    """None when the manifest cannot be read: destroy --force stopped what the other records
    prove and wrote the destroyed marker beside it (`manifest_error` says why)."""
    already: bool
    group_unchecked: str | None = None
    """Why destroy --force recorded destroyed without checking the program's group."""
    manifest_error: str | None = None


def destroy(engine: Engine, session_id: str, force: bool) -> DestroyOutcome:
    paths = engine.home.session(session_id)
    try:
        first = engine.read_manifest(paths)
    except AgentTtyError as err:
        if err.code is not ErrorCode.STORAGE_ERROR:
            raise
        if not force:
            raise AgentTtyError(
                err.code, f"{err.message}; `destroy --force` stops what host.json and program.json prove", **err.details
            ) from None
        return _force_without_manifest(engine, paths, err)
    if force and not is_terminal(first.status):
        # ForceSkipsUnreadableGroup: _force reads the group only once the host is proven dead.
        # A reconcile here would read it first, and fail on a record no retry makes readable.
        return _force(engine, paths, first)
    manifest = reconcile(engine, paths, first).manifest
    if manifest.status is Status.DESTROYED:
        return DestroyOutcome(manifest, already=True)
    if is_terminal(manifest.status):
        if force:
            blind = _unchecked_group(engine, paths, manifest)
            if blind is not None:
                return DestroyOutcome(engine.record_destroyed(paths, manifest), already=False, group_unchecked=blind)
        return DestroyOutcome(stop_leftovers_then_record_destroyed(engine, paths, manifest), already=False)
    return DestroyOutcome(_plain(engine, paths, manifest), already=False)


def _unchecked_group(engine: Engine, paths: SessionPaths, manifest: Manifest) -> str | None:
    """ForceSkipsUnreadableGroup: why the program's group cannot be checked at all (its record
    or its first judgement fails with an errno a retry does not change), after two tries 100 ms
    apart, or None when it can. A failure after that first check fails the destroy. Only --force
    goes on without the check, so that no session stays beyond every command's reach; a plain
    destroy and gc report the error."""
    reason = None
    for attempt in range(2):
        try:
            group = _read_group(engine, paths)
            if group is not None:
                engine.platform.judge_group(group)  # the first check: a failed /proc scan counts too
        except AgentTtyError as err:
            if not unreadable(err):
                raise
            reason = err.message
        else:
            if not engine.unprovable(paths, manifest, group):
                return None
            reason = f"{paths.program} is missing or does not parse, and the manifest names the program"
        if attempt == 0:
            time.sleep(UNCHECKED_RETRY_S)
    return reason


def _read_group(engine: Engine, paths: SessionPaths) -> GroupRef | None:
    """engine.group for the forced path: None only when program.json is missing or does not
    parse. engine.group also reads a failure with an errno outside UNREADABLE_ERRNOS (EMFILE,
    EAGAIN, ENXIO, ...) as no record, and --force would then go on blind; here it fails the
    destroy. Only a record that exists but proves nothing costs a second read."""
    group = engine.group(paths)
    if group is not None or not exists(paths.program):
        return group
    try:
        data = read_bytes(paths.program)  # any read error raises, with its errno
    except FileNotFoundError:
        return None
    try:
        ProgramRecord.from_json(data, str(paths.program))
    except RecordError:
        return None  # it does not parse: it proves nothing
    raise storage_error(f"{paths.program} changed while destroy read it; run destroy again", str(paths.program))


def force_skips_group(engine: Engine, paths: SessionPaths, manifest: Manifest) -> bool:
    """gc's hint (ForceSkipsUnreadableGroup): whether the read and first check that destroy
    --force runs fail with an errno a retry does not change, as far as one try tells: for an
    active session the host reads dead, and the group's record, or its first judgement, fails
    as `unreadable` accepts. Then destroy --force records the session destroyed unchecked."""
    from agent_tty.platform.types import HostVerdict

    try:
        if not is_terminal(manifest.status) and engine.judge_host(paths, manifest) is not HostVerdict.DEAD:
            return False
    except AgentTtyError:
        return False  # destroy --force fails on the host's judgement too
    try:
        group = _read_group(engine, paths)
        if group is not None:
            engine.platform.judge_group(group)
    except AgentTtyError as err:
        return unreadable(err)
    return False


def force_reaches_without_manifest(engine: Engine, paths: SessionPaths) -> bool:
    """gc's hint for an unreadable manifest: whether destroy --force's reads of host.json and
    program.json (ManifestlessForce) succeed, as far as one try tells."""
    from agent_tty.storage.records import HostRecord

    try:
        if read_optional(paths.host, HostRecord) is None:
            return False
        _read_group(engine, paths)
    except AgentTtyError:
        return False
    return True


def stop_leftovers_then_record_destroyed(engine: Engine, paths: SessionPaths, manifest: Manifest) -> Manifest:
    """DestroyStopsLeftovers: a process the program left behind (trap '' HUP; sleep &) is
    killed through program.json's proof, and destroyed is written only once it is gone."""
    if not engine.stop_group_and_wait(engine.group(paths)):
        raise engine.group_not_ended(paths, engine.group(paths), "a process of the session's program group is still running")
    return engine.record_destroyed(paths, manifest)


def _plain(engine: Engine, paths: SessionPaths, manifest: Manifest) -> Manifest:
    try:
        result = rpc.call(
            engine.socket(manifest), {"op": "destroy"}, timeout=PLAIN_DESTROY_TIMEOUT_S, session_id=paths.session_id
        )
    except AgentTtyError as err:
        if err.code is not ErrorCode.HOST_UNREACHABLE:
            raise
        # The host may have just ended: a proven death reconciles, anything else is unreachable.
        after = reconcile(engine, paths, engine.read_manifest(paths))
        if after.manifest.status is Status.DESTROYED:
            return after.manifest
        if is_terminal(after.manifest.status):
            return stop_leftovers_then_record_destroyed(engine, paths, after.manifest)
        if after.host == "dead":
            # The host is gone but its program's group did not end in time (or cannot be proven).
            group = engine.group(paths)
            if engine.unprovable(paths, after.manifest, group):
                raise unprovable_error(paths, after.manifest) from None
            raise engine.group_not_ended(
                paths, group, "the session host is dead and its program's group did not end in time"
            ) from None
        raise
    # R9: success only once we read destroyed.
    final = engine.read_manifest(paths)
    if final.status is Status.DESTROYED:
        return final
    if result.get("status") == Status.DESTROYING.value or not is_terminal(final.status):
        raise host_timeout(paths, "the session's program group did not end in time; the session stays destroying")
    return stop_leftovers_then_record_destroyed(engine, paths, final)


def _force_without_manifest(engine: Engine, paths: SessionPaths, err: AgentTtyError) -> DestroyOutcome:
    """ManifestlessForce: a session whose manifest cannot be read (0 bytes, cut short, a wrong
    version, a folder) is stopped through its other records, with the same proofs as ever: the
    host host.json proves alive is killed and must read dead (R19), then the group program.json
    proves is killed and must end (R15, R16). The manifest is left as it is (nothing is lost);
    the destroyed marker says a destroy chose destroyed, and gc removes the folder once host.json
    and program.json prove nothing alive."""
    from agent_tty.platform.types import HostVerdict
    from agent_tty.storage.files import write_marker
    from agent_tty.storage.records import HostRecord

    try:
        host = read_optional(paths.host, HostRecord)
    except AgentTtyError as host_err:
        raise AgentTtyError(
            ErrorCode.STORAGE_ERROR,
            f"{err.message}; and host.json cannot be read ({host_err.message}): nothing proves the host, nothing was stopped",
            **err.details,
        ) from None
    if host is None:
        raise AgentTtyError(
            ErrorCode.STORAGE_ERROR, f"{err.message}; and there is no host.json to prove the host: nothing was stopped", **err.details
        )
    engine.platform.kill_host(host.mechanism, host.pid, host.identity)  # only a host proven alive
    deadline = time.monotonic() + GROUP_WAIT_S
    while (verdict := engine.platform.judge_host(host.mechanism, host.pid, host.identity)) is not HostVerdict.DEAD:
        if time.monotonic() >= deadline:
            raise host_timeout(paths, f"cannot prove that the session host ended (it reads {verdict.value})")
        time.sleep(POLL_S)
    blind = None
    group = _read_group(engine, paths)  # the host is dead: no program.json can appear now
    if group is None:
        blind = f"{paths.program} is missing or does not parse"
    elif not engine.stop_group_and_wait(group):
        raise engine.group_not_ended(paths, group, "a process of the session's program group is still running")
    try:
        write_marker(paths.destroyed_marker)
    except FolderGone:
        raise not_found(paths.session_id) from None
    if group is not None:
        engine.platform.release_group(group)
    return DestroyOutcome(None, already=False, group_unchecked=blind, manifest_error=err.message)


def _force(engine: Engine, paths: SessionPaths, manifest: Manifest) -> DestroyOutcome:
    """Kill the proven host (R19), then the group program.json proves, then record destroyed."""
    from agent_tty.platform.types import HostVerdict

    host = engine.host_record(paths)
    if host is not None and host.pid == manifest.host_pid:
        engine.platform.kill_host(host.mechanism, host.pid, host.identity)
    deadline = time.monotonic() + GROUP_WAIT_S
    while True:
        verdict = engine.judge_host(paths, manifest)
        if verdict is HostVerdict.DEAD:
            break
        if time.monotonic() >= deadline:
            raise host_timeout(paths, f"cannot prove that the session host ended (it reads {verdict.value})")
        time.sleep(POLL_S)
    # The host is dead, so no program.json can appear after this read.
    again = engine.read_manifest(paths)
    blind = _unchecked_group(engine, paths, again)
    if blind is not None:
        return DestroyOutcome(engine.record_destroyed(paths, again), already=False, group_unchecked=blind)
    # A read that fails after the first check fails the destroy: the group may have read alive.
    group = _read_group(engine, paths)
    if not engine.stop_group_and_wait(group):
        raise engine.group_not_ended(paths, group, "a process of the session's program group is still running")
    again = engine.read_manifest(paths)
    if again.status is Status.DESTROYED:
        return DestroyOutcome(again, already=True)
    return DestroyOutcome(engine.record_destroyed(paths, again), already=False)
