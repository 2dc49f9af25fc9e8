"""What every lifecycle operation shares: the Home, the platform door, and the session's files."""

from __future__ import annotations

import time
from functools import cached_property

from agent_tty.protocol.errors import AgentTtyError, ErrorCode, not_found
from agent_tty.protocol.status import Status
from agent_tty.storage.files import FolderGone, read_optional, read_record, write_marker, write_record
from agent_tty.storage.home import Home, SessionPaths, remove_socket, trusted_socket_path
from agent_tty.storage.trust import check_session_folder
from agent_tty.storage.records import HostRecord, Manifest, ProgramRecord

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and dataclasses stay off every command's start-up (issue 26)
    from agent_tty.platform.manager import Platform
    from agent_tty.platform.types import GroupRef, GroupVerdict, HostVerdict
    from agent_tty.protocol.rpc import ConnectionPool

GROUP_WAIT_S = 5.0
"""How long a command waits for a killed group or host to end before HOST_TIMEOUT."""
POLL_S = 0.01


class Engine:
    home: Home
    connections: ConnectionPool | None
    """A long-lived client's kept-open host connections (agent_tty.api); None: one per call."""
    ambiguous: set[int]
    """Groups whose kill read AMBIGUOUS in this engine (a frozen judgement may see what a
    plain judge misses): their error says so (group_not_ended)."""

    home_checked: bool
    """engine_for checked the Home's chain (check_home) when it made this engine: a socket folder
    right inside the Home needs no second walk of the folders above it (Engine.socket)."""

    def __init__(
        self, home: Home, connections: ConnectionPool | None = None, ambiguous: set[int] | None = None, home_checked: bool = False
    ) -> None:
        self.home = home
        self.connections = connections
        self.ambiguous = set() if ambiguous is None else ambiguous
        self.home_checked = home_checked

    def __repr__(self) -> str:
        return f"Engine(home={self.home!r}, connections={self.connections!r}, ambiguous={self.ambiguous!r})"

    def call_host(self, socket_path: str, request: dict[str, object], timeout: float | None, session_id: str) -> dict:  # type: ignore[type-arg]
        """One request to a session's host, at the path `socket` checked."""
        if self.connections is not None:
            return self.connections.call(socket_path, request, timeout, session_id)
        from agent_tty.protocol import rpc

        return rpc.call(socket_path, request, timeout=timeout, session_id=session_id)

    @cached_property
    def platform(self) -> Platform:
        # pluggy and the plugins load only when a command needs a platform answer.
        from agent_tty.platform.manager import Platform

        return Platform(self.home.root)

    # ------------------------------------------------------------ reads

    def read_manifest(self, paths: SessionPaths) -> Manifest:
        check_session_folder(paths.folder)
        try:
            return read_record(paths.manifest, Manifest)
        except FileNotFoundError:
            raise not_found(paths.session_id) from None

    def socket(self, manifest: Manifest) -> str:
        """The host's socket, once the manifest's path is proven to lie in a folder of ours."""
        checked = self.home.root if self.home_checked else None
        return trusted_socket_path(manifest.socket_path, manifest.session_id, checked)

    def host_record(self, paths: SessionPaths) -> HostRecord | None:
        """host.json, or None when missing or unreadable (then the host reads unknown)."""
        try:
            return read_optional(paths.host, HostRecord)
        except AgentTtyError:
            return None

    def group(self, paths: SessionPaths) -> GroupRef | None:
        """The group program.json proves; None when there is no record or it does not parse
        (a record that does not parse proves nothing: no kill). A read that fails with an
        errno raises: a retry may change a transient one (EMFILE, EINTR, ...), so it never
        reads as "no record" (which would let a destroy or gc go on without the group, R16,
        R20); `unreadable` says which ones destroy --force may go on without."""
        from agent_tty.platform.types import GroupRef

        try:
            record = read_optional(paths.program, ProgramRecord)
        except AgentTtyError as err:
            if "errno" in err.details:
                raise
            return None
        if record is None:
            return None
        host = self.host_record(paths)
        return GroupRef(
            mechanism=record.mechanism,
            pid=record.pid,
            proof=record.proof,
            folder=paths.folder,
            host_identity=host.identity if host is not None else None,
            session_id=paths.session_id,
            reaped=record.reaped,
        )

    def judge_host(self, paths: SessionPaths, manifest: Manifest) -> HostVerdict:
        from agent_tty.platform.types import HostVerdict

        if manifest.host_pid is None:
            return HostVerdict.UNKNOWN  # create always names the host: a null pid is no proof
        record = self.host_record(paths)
        if record is not None:
            verdict = self.platform.judge_host(record.mechanism, record.pid, record.identity)
            # HostJsonOutranksHostPid: create and the host write host.json for the pid the
            # manifest names, so the two differ only when a record was edited. A host that
            # host.json proves alive (or cannot judge) is never read dead, whatever hostPid says.
            if record.pid == manifest.host_pid or verdict is not HostVerdict.DEAD:
                return verdict
        mechanism = record.mechanism if record is not None else manifest.mechanism
        if mechanism is None:
            return HostVerdict.UNKNOWN
        return self.platform.judge_host(mechanism, manifest.host_pid, None)

    # ------------------------------------------------------------ the program's group

    def stop_group(self, group: GroupRef) -> GroupVerdict:
        """SIGKILL through the one proof-then-kill path (R15); the verdict the proof read."""
        from agent_tty.platform.types import Stop

        return self.platform.kill_group(group, Stop.KILL)

    def wait_group_gone(self, group: GroupRef, limit: float = GROUP_WAIT_S) -> bool:
        deadline = time.monotonic() + limit
        while self.platform.group_alive(group):
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_S)
        return True

    def stop_group_and_wait(self, group: GroupRef | None, limit: float = GROUP_WAIT_S) -> bool:
        """Kill the proven group and wait until it is gone; True once nothing of it runs.
        No record proves nothing: no kill, and nothing to wait for."""
        if group is None:
            return True
        from agent_tty.platform.types import GroupVerdict

        if self.stop_group(group) is GroupVerdict.AMBIGUOUS:
            self.ambiguous.add(group.pid)
            return False  # nothing was signalled, and no wait makes them provable (ADR 0026)
        return self.wait_group_gone(group, limit)

    def group_not_ended(self, paths: SessionPaths, group: GroupRef | None, what: str) -> AgentTtyError:
        """Why a group did not end: processes nothing tells from a group that took the id
        (the kill sent nothing), else HOST_TIMEOUT with `what`."""
        from agent_tty.platform.types import GroupVerdict

        if group is not None and (
            group.pid in self.ambiguous or self.platform.judge_group(group) is GroupVerdict.AMBIGUOUS
        ):
            return ambiguous_error(paths, group)
        return host_timeout(paths, what)

    def unprovable(self, paths: SessionPaths, manifest: Manifest, group: GroupRef | None) -> bool:
        """A manifest names a program but program.json cannot prove its group: the program may
        still run, so an active session must not be recorded ended (R11, R13)."""
        return group is None and manifest.child_pid is not None

    # ------------------------------------------------------------ writes

    def write_manifest(self, paths: SessionPaths, manifest: Manifest) -> Manifest:
        try:
            write_record(paths.manifest, manifest)
        except FolderGone:
            raise not_found(paths.session_id) from None
        return manifest

    def record_destroyed(self, paths: SessionPaths, manifest: Manifest) -> Manifest:
        """The marker, then destroyed from a copy no host write can follow; the exit code stays
        (DestroyRecordsDestroyed, DestroyKeepsExitCode)."""
        try:
            write_marker(paths.destroyed_marker)
        except FolderGone:
            raise not_found(paths.session_id) from None
        now = time.time()
        record = manifest.replace(
            status=Status.DESTROYED,
            updated_at=now,
            ended_at=manifest.ended_at or now,
            failure=None,
        )
        self.write_manifest(paths, record)
        unlink_socket(record)
        try:
            group = self.group(paths)
        except AgentTtyError:
            group = None
        if group is not None:
            self.platform.release_group(group)  # nothing of it runs: destroyed says so
        return record


UNREADABLE_ERRNOS = frozenset({"EACCES", "EPERM", "EIO", "EISDIR", "EINVAL", "ENXIO", "ENOTDIR", "ELOOP", "ENAMETOOLONG"})
"""Read failures a retry does not change; only these let destroy --force go on blind. EINVAL is
a record that is not a regular file (a FIFO, a device; ENXIO: a socket), EPERM one owned by another user, ELOOP
a link: storage refuses them, and they prove nothing."""


def unreadable(err: AgentTtyError) -> bool:
    return err.code is ErrorCode.STORAGE_ERROR and err.details.get("errno") in UNREADABLE_ERRNOS


def unlink_socket(manifest: Manifest) -> None:
    """Remove the socket of a host that ended (only called once the host is proven gone)."""
    remove_socket(manifest.socket_path, manifest.session_id)


def host_timeout(paths: SessionPaths, what: str) -> AgentTtyError:
    return AgentTtyError(ErrorCode.HOST_TIMEOUT, what, sessionId=paths.session_id)


AMBIGUOUS_GROUP = (
    "processes run in the program's process group {pgid}, but nothing proves they are the session's: "
    "its leader ended, and they started after the session host saw it end (or no host saw it end), "
    "so they may be an unrelated job that got the same process group id; nothing was signalled"
)
"""What is unknown when a group reads ambiguous (ADR 0026): gc's reason and destroy's error."""


def ambiguous_error(paths: SessionPaths, group: GroupRef) -> AgentTtyError:
    return AgentTtyError(
        ErrorCode.HOST_TIMEOUT,
        AMBIGUOUS_GROUP.format(pgid=group.pid)
        + f". Check them with `ps -o pid,sid,lstart,args -g {group.pid}` and end them yourself if they are the "
        "session's; destroy then records the session destroyed",
        sessionId=paths.session_id,
        processGroup=group.pid,
        verdict="ambiguous",
    )


def unprovable_error(paths: SessionPaths, manifest: Manifest) -> AgentTtyError:
    return AgentTtyError(
        ErrorCode.HOST_TIMEOUT,
        f"{paths.program} is missing or unreadable, so nothing proves that the program's group "
        f"(process group {manifest.child_pid}) has ended; check it with `ps -o pid,pgid,args -g "
        f"{manifest.child_pid}`: `destroy --force` records the session destroyed without that check",
        sessionId=paths.session_id,
        path=str(paths.program),
    )


def engine_for(home_option: str | None) -> Engine:
    """The engine of a checked Home: nothing in a Home another user could change is obeyed."""
    from agent_tty.storage.home import resolve_home
    from agent_tty.storage.trust import check_home, real_home

    root = real_home(str(resolve_home(home_option)))
    # A Home that did not exist was not checked (only the folders above it were), so its socket
    # folder, once someone makes it, still has every folder above it walked (docs/adr/0036).
    return Engine(Home(root), home_checked=check_home(root))


