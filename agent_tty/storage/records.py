"""The records of a session folder: session.json, host.json, program.json and the event log."""

from __future__ import annotations

from agent_tty.protocol.status import Status
from agent_tty.storage.schema import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal
else:  # what the record checker reads the annotations with: typing costs every command ~2 ms
    from agent_tty.storage.schema import Any, Literal


class Failure(Record):
    reason: str
    """A stable word: host-death, spawn-failed, resource-limit, create-failed, host-start-failed."""
    message: str


class LogLoss(Record):
    """What the event log lost while its writes failed (a full disk): it is incomplete."""

    since: float
    """When the first event was lost."""
    events_lost: int
    bytes_lost: int
    """Bytes of program output and input in the lost events."""


class Manifest(Record):
    """session.json: what the session is and where its lifecycle stands."""

    VERSION = 1
    version: Literal[1]
    session_id: str
    status: Status
    argv: tuple[str, ...]
    cols: int
    rows: int
    created_at: float
    updated_at: float
    socket_path: str
    name: str | None = None
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    term: str = "xterm-256color"
    idle_timeout_ms: int | None = None
    mechanism: str | None = None
    host_pid: int | None = None
    child_pid: int | None = None
    exit_code: int | None = None
    exit_signal: int | None = None
    ended_at: float | None = None
    failure: Failure | None = None
    log_incomplete: LogLoss | None = None
    """Set once the host lost events (the disk was full); records without it read as None."""


class HostRecord(Record):
    """host.json: the identity that proves a pid is still this session's host (R2, R19)."""

    VERSION = 1
    version: Literal[1]
    mechanism: str
    """The platform plugin that captured the identity and can judge it."""
    pid: int
    identity: dict[str, Any]
    """Plugin data: on Linux the boot id, start time and pid namespace."""


class ProgramRecord(Record):
    """program.json: the record that later proves a process group is this program's (R15, R16)."""

    VERSION = 1
    version: Literal[1]
    mechanism: str
    pid: int
    """The program's pid, which is also its process group and session id."""
    proof: dict[str, Any] | None = None
    """Plugin data that proves membership (a token); None proves only what the plugin allows."""
    reaped: dict[str, Any] | None = None
    """Plugin data the host read right after it reaped the leader (capture_reap), written once
    then; None before, or when another process reaped it. Records without it read as None."""


EventType = Literal["start", "output", "input", "resize", "signal", "exit", "destroy", "marker", "gap", "checkpoint"]
"""`gap`: events between its fromSeq and toSeq that the file lacks were lost while writes
failed (eventsLost, bytesLost, since, error); it is written once writes succeed again.
`checkpoint`: a rotated log's first events after its header; their data, fed like output to
a fresh screen of the header's size, rebuilds the screen the older file ended with (ADR 0015)."""


class Event(Record):
    """One line of events.jsonl. Output and input carry text; bytes that are not UTF-8
    travel as surrogate escapes, so a replay restores the exact bytes."""

    seq: int
    time: float
    type: EventType
    data: str | None = None
    cols: int | None = None
    rows: int | None = None
    signal: str | None = None
    exit_code: int | None = None
    exit_signal: int | None = None
    argv: tuple[str, ...] | None = None
    label: str | None = None
    kind: str | None = None
    """For input: type, paste, keys or run."""


EVENT_LOG_VERSION = 1


class EventLogHeader(Record):
    """The first line of events.jsonl."""

    VERSION = EVENT_LOG_VERSION
    version: Literal[1]
    session_id: str
    cols: int
    rows: int
    started_at: float
