"""The host's shutdown state machine: why a session ends, the states its end goes through (a
table says which may follow which), and the steps that end it: the program's exit, the kill, the
group wait, the last record and the retry of a step whose write failed (docs/adr/0037)."""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent_tty.host.eventlog import RETRY_FIRST_S, RETRY_MAX_S
from agent_tty.platform.types import GroupRef, ProgramExit, Stop
from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.protocol.status import Status, policy
from agent_tty.storage.files import FolderGone, write_marker

if TYPE_CHECKING:
    from agent_tty.host.eventlog import EventLog
    from agent_tty.host.writer import ManifestWriter
    from agent_tty.platform.manager import Platform
    from agent_tty.storage.records import Failure

SHUTDOWN_KILL_GRACE_S = 2.0
"""SIGHUP first; the group gets SIGKILL this long after (a program that ignores SIGHUP)."""
GROUP_WAIT_S = 5.0
"""How long the host waits for the group to end after a kill before it gives up."""
EXIT_GROUP_WAIT_S = 2.0
"""After a program exits on its own: time for the rest of its group to follow the hang-up."""
POLL_S = 0.01
"""How often a group wait reads the group."""


class Reason(enum.StrEnum):
    """Why the host ends its session."""

    DESTROY = "destroy"
    """The `destroy` op: the caller gets its answer once the session reads destroyed."""
    SIGTERM = "sigterm"
    """A SIGTERM to the host: a create that gave up (R17), a user, the system."""
    CREATE_FAILED = "create-failed"
    """create's marker, seen after the start-up write, or a socket the host could not serve."""
    IDLE = "idle"
    """`--idle-timeout` ran out: the program is hung up and its end recorded as an exit."""
    FOLDER_GONE = "folder-gone"
    """The session folder left its path: nothing is written any more (ADR 0024)."""


class State(enum.Enum):
    """Where the host's end stands. The values name states in logs and errors only: no record and
    no reply carries them."""

    SERVING = "serving"
    """No shutdown: the program runs, or it exited on its own and the host waits for its group."""
    IDLE = "idle"
    """The idle hang-up is on its way; the end is recorded `exited`. A destroy may still come."""
    DESTROYING = "destroying"
    """A destroy, a SIGTERM or create-failed: `destroying` is on disk (or the session no longer
    takes commands); the end is recorded `destroyed`, or left `destroying` when the group outlives
    the wait (HostWaitsForGroup)."""
    FOLDER_GONE = "folder-gone"
    """The folder is gone from its path: the group is killed, nothing is recorded, the host ends."""


ENDS_AS: dict[Reason, State] = {
    Reason.DESTROY: State.DESTROYING,
    Reason.SIGTERM: State.DESTROYING,
    Reason.CREATE_FAILED: State.DESTROYING,
    Reason.IDLE: State.IDLE,
    Reason.FOLDER_GONE: State.FOLDER_GONE,
}
"""The state each reason's shutdown runs in."""

TRANSITIONS: dict[State, frozenset[State]] = {
    State.SERVING: frozenset({State.IDLE, State.DESTROYING, State.FOLDER_GONE}),
    # A destroy or SIGTERM outranks the idle hang-up (its end is recorded destroyed); so does
    # the folder's removal (nothing may be written where the folder was).
    State.IDLE: frozenset({State.DESTROYING, State.FOLDER_GONE}),
    # Final: a second destroy, SIGTERM or create-failed joins the shutdown in course, and a
    # folder removed meanwhile makes the last write fail (FolderGone), which ends the host.
    State.DESTROYING: frozenset(),
    State.FOLDER_GONE: frozenset(),
}
"""Which state may follow which. A shutdown whose state may not follow the current one is
ignored (`begin`); entering one the table does not allow is a bug (IllegalTransition)."""


class IllegalTransition(RuntimeError):
    """A step moved the machine where TRANSITIONS does not allow: a bug, never a race."""


class HostSide(Protocol):
    """What the machine reads and asks of its host, and nothing else of it: the program's end
    and group (the group gains its reap data at the exit), the host's timers, its socket."""

    @property
    def exit(self) -> ProgramExit | None: ...

    @property
    def group(self) -> GroupRef: ...

    def after(self, delay: float, callback: Callable[[], None]) -> int: ...

    def cancel(self, timer: int) -> None: ...

    def stop_serving(self) -> None: ...


class Shutdown:
    """The one owner of how the session ends. The host calls `begin` (destroy, SIGTERM,
    create-failed, idle), `folder_gone`, `on_exit` (the program ended) and `write` (every
    manifest write of the host); `ended` tells its loop to stop."""

    def __init__(
        self, host: HostSide, platform: Platform, writer: ManifestWriter, events: EventLog, destroyed_marker: Path
    ) -> None:
        self.host = host
        self.platform = platform
        self.writer = writer
        self.events = events
        self.destroyed_marker = destroyed_marker
        self.state = State.SERVING
        self.ended = False
        """The host's loop stops: a terminal record is written, or nothing more can be."""
        self.kill_timer: int | None = None
        self.retry_timer: int | None = None
        self.write_delay = 0.0
        self.write_error: AgentTtyError | None = None

    # ------------------------------------------------------------------ states

    def may(self, state: State) -> bool:
        return state in TRANSITIONS[self.state]

    def _enter(self, state: State) -> None:
        if not self.may(state):
            raise IllegalTransition(f"shutdown state {self.state.value} cannot become {state.value}")
        self.state = state

    # ------------------------------------------------------------------ the ways in

    def begin(self, reason: Reason, failure: Failure | None = None) -> None:
        """`failure` says why the host ends the session on its own (it could not serve it)."""
        if not self.may(ENDS_AS[reason]):
            return
        previous = self.state
        if reason is not Reason.IDLE and policy(self.writer.current.status).commandable:
            self.write(status=Status.DESTROYING, **({"failure": failure} if failure else {}))
            if self.ended:
                return
            if self.writer.current.status is not Status.DESTROYING:
                # The write failed. Nothing is stopped before destroying is on disk, and the same
                # transition can run again: a destroy gets the error now, a SIGTERM is retried.
                if reason is Reason.DESTROY:
                    error = self.write_error
                    message = error.message if error is not None else "cannot write the manifest"
                    raise AgentTtyError(
                        ErrorCode.STORAGE_ERROR,
                        f"{message}; nothing was stopped: run destroy again once the folder takes writes",
                        **(error.details if error is not None else {}),
                    )
                self.retry_later(lambda: self.begin(reason, failure))
                return
        self._enter(ENDS_AS[reason])
        if self.host.exit is not None:
            # Already exited and waiting for its group: destroy ends that group now.
            self.kill(Stop.KILL)
            self.wait_group(GROUP_WAIT_S, self.finish_destroyed, self.finish_gave_up)
            return
        if previous is State.IDLE:
            return  # the hang-up and its kill timer are already on their way
        self.kill(Stop.HANGUP)
        self.kill_timer = self.host.after(SHUTDOWN_KILL_GRACE_S, lambda: self.kill(Stop.KILL))

    def folder_gone(self) -> None:
        """The folder was removed, or another one (a link, a restored copy) is now at its path:
        no record is written, since the path may name somebody else's files; the group is ended
        through its proof as destroy ends it, and the host ends once it is gone."""
        # SIGKILL at once, no hang-up first: nobody can reach the session to see it end well,
        # and a plugin without a token proves the group best while the leader is our unreaped
        # child (macos_ps). The program's exit then ends the host (on_exit).
        self.events.append("signal", signal="SIGKILL", label="folder-gone")
        self._enter(State.FOLDER_GONE)
        self.host.stop_serving()
        self.kill(Stop.KILL)
        if self.host.exit is not None:
            self.wait_group(GROUP_WAIT_S, self.end_unrecorded, self.end_unrecorded)
        # A kill the proof did not allow (a plugin that reads a removed folder's group gone, or
        # cannot tell) must not keep us for ever: we end anyway, and closing the terminal hangs
        # up what still runs in it.
        self.host.after(GROUP_WAIT_S, self.end_unrecorded)

    def on_exit(self) -> None:
        """The program ended (its exit is logged and the waits settled): end what it left."""
        if self.kill_timer is not None:
            self.host.cancel(self.kill_timer)
            self.kill_timer = None
        if self.state is State.DESTROYING:
            # KillsProgramGroup: what the program left behind goes too, then HostWaitsForGroup.
            self.kill(Stop.KILL)
            self.wait_group(GROUP_WAIT_S, self.finish_destroyed, self.finish_gave_up)
        elif self.state is State.FOLDER_GONE:
            self.kill(Stop.KILL)
            self.wait_group(GROUP_WAIT_S, self.end_unrecorded, self.end_unrecorded)
        elif self.state is State.IDLE:
            self.kill(Stop.KILL)
            self.wait_group(GROUP_WAIT_S, self.finish_exited, self.finish_exited)
        elif self.platform.group_alive(self.host.group):
            self.write(status=Status.EXITING, **self._exit_fields())  # informative: EXITED follows
            self.wait_group(EXIT_GROUP_WAIT_S, self.finish_exited, self.finish_exited)
        else:
            self.finish_exited()

    # ------------------------------------------------------------------ kill and wait

    def kill(self, signal: int) -> None:
        self.platform.kill_group(self.host.group, signal)

    def wait_group(self, limit: float, then: Callable[[], None], give_up: Callable[[], None]) -> None:
        deadline = time.monotonic() + limit
        generation = self.state

        def poll() -> None:
            if self.ended or self.state is not generation:
                return  # a destroy took over this wait
            if not self.platform.group_alive(self.host.group):
                then()
            elif time.monotonic() >= deadline:
                give_up()
            else:
                self.host.after(POLL_S, poll)

        poll()

    # ------------------------------------------------------------------ the end

    def _settle_log(self) -> None:
        """Before the last record: one more try of the log's waiting writes; what still cannot
        be written is counted as lost, so the last record's `logIncomplete` says so."""
        if self.events.failing:
            self.events.retry(force=True)
            if self.events.failing:
                self.events.give_up_kept()

    def _exit_fields(self) -> dict[str, Any]:
        exit = self.host.exit
        assert exit is not None
        return {"exit_code": exit.exit_code, "exit_signal": exit.exit_signal}

    def finish_exited(self) -> None:
        self._settle_log()
        if self.write(status=Status.EXITED, ended_at=time.time(), **self._exit_fields()):
            self.ended = True
        elif not self.ended:
            self.retry_later(self.finish_exited)

    def finish_destroyed(self) -> None:
        self._settle_log()
        # DestroyRecordsDestroyed: the marker first, then the record that keeps the exit code.
        try:
            write_marker(self.destroyed_marker)
        except FolderGone:
            self.ended = True
            return
        except AgentTtyError as err:
            if err.code is not ErrorCode.STORAGE_ERROR:
                raise
            self.write_error = err
            self.retry_later(self.finish_destroyed)
            return
        fields = self._exit_fields() if self.host.exit is not None else {}
        if self.write(status=Status.DESTROYED, ended_at=time.time(), **fields):
            self.ended = True
        elif not self.ended:
            self.retry_later(self.finish_destroyed)

    def finish_gave_up(self) -> None:
        # HostWaitsForGroup: the group still runs (another user's process?). Leave the record
        # destroying, without a terminal write, and end: a later reconcile retries the kill.
        self.ended = True

    def end_unrecorded(self) -> None:
        self.ended = True

    # ------------------------------------------------------------------ writes and retries

    def write(self, **changes: Any) -> bool:
        """A write that may fail (a full disk, an unwritable folder): False leaves the manifest
        and `writer.current` as they were, so the caller can retry the same step (a failed
        resize record keeps the old size). Every write also carries what the event log lost.
        None once the folder is gone from its path: the path may name another folder (ADR 0024)."""
        if self.state is State.FOLDER_GONE:
            return False
        lost = self.events.lost
        if lost is not None and lost != self.writer.current.log_incomplete:
            changes.setdefault("log_incomplete", lost)
        try:
            self.writer.write(**changes)
        except FolderGone:
            self.ended = True
            return False
        except AgentTtyError as err:
            if err.code is not ErrorCode.STORAGE_ERROR:
                raise
            self.write_error = err
            return False
        self.write_delay = 0.0
        return True

    def retry_later(self, step: Callable[[], None]) -> None:
        """Run a lifecycle step whose write failed again after a back-off (0.1 s doubling to
        5 s), unless another shutdown took over meanwhile. One step waits at a time."""
        if self.retry_timer is not None:
            self.host.cancel(self.retry_timer)
        generation = self.state
        self.write_delay = min(self.write_delay * 2, RETRY_MAX_S) if self.write_delay else RETRY_FIRST_S

        def again() -> None:
            self.retry_timer = None
            if not self.ended and self.state is generation:
                step()

        self.retry_timer = self.host.after(self.write_delay, again)
