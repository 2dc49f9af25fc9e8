"""Results of the lifecycle commands: create, list, inspect, destroy, gc."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

from agent_tty.protocol.status import Status
from agent_tty.schema.base import Model, SessionResult, absent, doc


class CreateResult(Model):
    sessionId: str = doc("The new session's id.")
    status: Status = doc("The session's status once its host answered (normally `running`).")
    hostPid: int | None = doc("The pid of the session's host process.")
    childPid: int | None = doc("The pid of the program (also its process group id).")
    cols: int = doc("Terminal width in columns.")
    rows: int = doc("Terminal height in rows.")
    mechanism: str | None = doc("The platform plugin that owns the program's process group.")
    name: str | None = doc("The name given with --name, else null.")


class Failure(Model):
    reason: str = doc("A stable word: host-death, spawn-failed, resource-limit, create-failed, host-start-failed.")
    message: str = doc("What went wrong, for a person.")


class LogLoss(Model):
    since: float = doc("When the first event was lost (Unix time).")
    eventsLost: int = doc("Events the log lost while its writes failed (a full disk).")
    bytesLost: int = doc("Bytes of program output and input in the lost events.")


class SessionSummary(Model):
    sessionId: str = doc("The session's id.")
    name: str | None = doc("The session's name, else null.")
    status: Status = doc("running, exiting, destroying, exited, failed or destroyed.")
    argv: list[str] = doc("The program and its arguments.")
    hostPid: int | None = doc("The host's pid.")
    childPid: int | None = doc("The program's pid.")
    cols: int = doc("Terminal width.")
    rows: int = doc("Terminal height.")
    mechanism: str | None = doc("The platform plugin that owns the program's group.")
    createdAt: float = doc("When the session was created (Unix time).")
    endedAt: float | None = doc("When the session ended (Unix time), null while it runs.")
    exitCode: int | None = doc("The program's exit code, null until it exited normally.")
    exitSignal: int | None = doc("The signal that ended the program, else null.")
    failure: Failure | None = doc("Why the session failed, null unless its status is failed.")


class Unreadable(Model):
    sessionId: str = doc("The session folder whose records could not be read.")
    code: str = doc("The error code reading it gave (STORAGE_ERROR, ...).")
    message: str = doc("What is wrong with it.")


class IncompleteFolder(Model):
    sessionId: str = doc("A session folder without session.json (a create or gc died half-way).")
    status: Literal["incomplete"] = doc("Always `incomplete`.")
    ageSeconds: float = doc("Seconds since the folder last changed.")


class ListResult(Model):
    sessions: list[SessionSummary] = doc("Active sessions (with --all, ended ones too), oldest first.")
    unreadable: list[Unreadable] = doc("Sessions whose records could not be read.")
    incomplete: list[IncompleteFolder] = doc("Folders without a manifest; listed with --all only.")


class Derived(Model):
    folder: str = doc("The session's folder.")
    socketPath: str = doc("The host's socket.")
    mechanism: str | None = doc("The platform plugin that owns the program's group.")
    ageSeconds: float = doc("Seconds since the session was created.")
    host: str | None = doc("The host verdict: alive, dead or unknown; null for an ended session.")
    destroyedMarker: bool = doc("Whether the session's destroyed marker exists.")
    createFailedMarker: bool = doc("Whether the session's create-failed marker exists.")
    homeFreeBytes: int = absent("Free bytes on the Home's file system (absent where it cannot be read).")
    homeNearlyFull: bool = absent("Whether the Home's file system is nearly full (absent with homeFreeBytes).")


class InspectResult(SessionResult):
    """session.json as it is, plus derived facts. Open: a manifest field added later (same
    version) is data, not an error."""

    model_config = ConfigDict(extra="allow")

    version: Literal[1] = doc("The manifest's version.")
    status: Status = doc("The session's status, reconciled (a dead host is recorded first).")
    argv: list[str] = doc("The program and its arguments.")
    cols: int = doc("Terminal width.")
    rows: int = doc("Terminal height.")
    createdAt: float = doc("When the session was created (Unix time).")
    updatedAt: float = doc("When the manifest was last written (Unix time).")
    socketPath: str = doc("The host's socket.")
    name: str | None = doc("The session's name, else null.")
    cwd: str | None = doc("The program's working directory.")
    env: dict[str, str] = doc("Environment variables given with --env.")
    term: str = doc("TERM of the program.")
    idleTimeoutMs: int | None = doc("--idle-timeout in ms, else null.")
    mechanism: str | None = doc("The platform plugin that owns the program's group.")
    hostPid: int | None = doc("The host's pid.")
    childPid: int | None = doc("The program's pid.")
    exitCode: int | None = doc("The program's exit code, else null.")
    exitSignal: int | None = doc("The signal that ended the program, else null.")
    endedAt: float | None = doc("When the session ended (Unix time), else null.")
    failure: Failure | None = doc("Why the session failed, else null.")
    logIncomplete: LogLoss | None = doc("What the event log lost (a full disk), else null.")
    derived: Derived = doc("Facts derived from the manifest and the file system.")


class DestroyResult(SessionResult):
    destroyed: Literal[True] = doc("Always true: the session is destroyed.")
    alreadyDestroyed: bool = doc("Whether it was destroyed before this command.")
    status: Status = doc("The session's final status (destroyed, or exited/failed when it had ended before).")
    exitCode: int | None = doc("The program's exit code, else null.")
    exitSignal: int | None = doc("The signal that ended the program, else null.")
    manifestUnreadable: str = absent("Why the manifest could not be read; the destroyed marker records the end.")
    groupUnchecked: bool = absent("True when the program's process group could not be checked.")
    warning: str = absent("What a person should know (a process the program left may still run).")


class Skipped(Model):
    sessionId: str = doc("A session gc kept.")
    reason: str = doc("Why it was kept.")


class GcResult(Model):
    removedSessions: list[str] = doc("Sessions removed (with --dry-run: that would be removed).")
    skippedSessions: list[Skipped] = doc("Sessions kept, with the reason.")
    dryRun: bool = doc("Whether this was --dry-run (nothing removed).")
    sweepErrors: dict[str, str] = absent("Platform plugins whose sweep failed, with the error (absent when none).")
