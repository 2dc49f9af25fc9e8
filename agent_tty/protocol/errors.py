"""Error codes, exit codes and the one error type the CLI turns into an envelope."""

from __future__ import annotations

import enum



class ExitCode(enum.IntEnum):
    """Process exit codes of every command (CLI-CONTRACT.md)."""

    OK = 0
    """The command did what it was asked."""
    INTERNAL_ERROR = 1
    """A bug: something we did not classify."""
    INVALID_INPUT = 2
    """A bad flag, session id, size, duration, signal or input."""
    SESSION_NOT_FOUND = 3
    """No such session, or gc removed it while the command ran."""
    SESSION_NOT_RUNNING = 4
    """The session exists but is not commandable."""
    HOST_TIMEOUT = 5
    """The host or the program's group did not end in time."""
    HOST_UNREACHABLE = 6
    """No host answers on the session's socket."""
    EXPORT_FAILED = 7
    """An artifact could not be produced."""
    STORAGE_ERROR = 8
    """A record could not be read, written or validated."""
    PROTOCOL_ERROR = 9
    """A malformed RPC message."""
    REPLAY_FAILED = 10
    """The event log could not be replayed."""
    WAIT_TIMEOUT = 11
    """A wait timed out (the envelope still says ok)."""
    COMMAND_FAILED = 12
    """`run`: the command completed with a non-zero exit status (the envelope still says ok,
    with `exitStatus`), so `agent-tty run ID make && deploy` does not deploy after a failure."""


class ErrorCode(enum.StrEnum):
    INTERNAL_ERROR = "INTERNAL_ERROR"
    INVALID_INPUT = "INVALID_INPUT"
    USAGE = "USAGE"
    SESSION_NOT_FOUND = "SESSION_NOT_FOUND"
    SESSION_NOT_RUNNING = "SESSION_NOT_RUNNING"
    HOST_TIMEOUT = "HOST_TIMEOUT"
    HOST_UNREACHABLE = "HOST_UNREACHABLE"
    EXPORT_FAILED = "EXPORT_FAILED"
    STORAGE_ERROR = "STORAGE_ERROR"
    PROTOCOL_ERROR = "PROTOCOL_ERROR"
    REPLAY_FAILED = "REPLAY_FAILED"
    WAIT_TIMEOUT = "WAIT_TIMEOUT"
    PLATFORM_UNAVAILABLE = "PLATFORM_UNAVAILABLE"
    UNSAFE_HOME = "UNSAFE_HOME"
    RESOURCE_LIMIT = "RESOURCE_LIMIT"
    MISSING_DEPENDENCY = "MISSING_DEPENDENCY"
    COMMAND_FAILED = "COMMAND_FAILED"


EXIT_CODES: dict[ErrorCode, ExitCode] = {
    ErrorCode.INTERNAL_ERROR: ExitCode.INTERNAL_ERROR,
    ErrorCode.INVALID_INPUT: ExitCode.INVALID_INPUT,
    ErrorCode.USAGE: ExitCode.INVALID_INPUT,
    ErrorCode.SESSION_NOT_FOUND: ExitCode.SESSION_NOT_FOUND,
    ErrorCode.SESSION_NOT_RUNNING: ExitCode.SESSION_NOT_RUNNING,
    ErrorCode.HOST_TIMEOUT: ExitCode.HOST_TIMEOUT,
    ErrorCode.HOST_UNREACHABLE: ExitCode.HOST_UNREACHABLE,
    ErrorCode.EXPORT_FAILED: ExitCode.EXPORT_FAILED,
    ErrorCode.STORAGE_ERROR: ExitCode.STORAGE_ERROR,
    ErrorCode.PROTOCOL_ERROR: ExitCode.PROTOCOL_ERROR,
    ErrorCode.REPLAY_FAILED: ExitCode.REPLAY_FAILED,
    ErrorCode.WAIT_TIMEOUT: ExitCode.WAIT_TIMEOUT,
    # A platform that cannot serve the request is an environment problem the user must fix.
    ErrorCode.PLATFORM_UNAVAILABLE: ExitCode.INTERNAL_ERROR,
    # The system refused a process (a process limit): nothing was left; retry once it frees.
    ErrorCode.RESOURCE_LIMIT: ExitCode.INTERNAL_ERROR,
    # A Home (or a folder above it) that another user could change: nothing in it is obeyed.
    ErrorCode.UNSAFE_HOME: ExitCode.STORAGE_ERROR,
    # A command whose optional extra is not installed (`agent-tty mcp` without `[mcp]`): nothing
    # ran; the invocation cannot work until the install changes, as a bad flag cannot (ADR 0035).
    ErrorCode.MISSING_DEPENDENCY: ExitCode.INVALID_INPUT,
    # `run`'s command completed with a non-zero status: the command says so in an ok envelope
    # (exit 12); a `batch` step that ran it reports it as this error.
    ErrorCode.COMMAND_FAILED: ExitCode.COMMAND_FAILED,
}


class AgentTtyError(Exception):
    """The one error the engine raises on purpose; the CLI prints it as an envelope."""

    def __init__(self, code: ErrorCode, message: str, **details: object) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = {k: v for k, v in details.items() if v is not None}

    @property
    def exit_code(self) -> ExitCode:
        return EXIT_CODES[self.code]

    def with_details(self, **details: object) -> AgentTtyError:
        self.details.update({k: v for k, v in details.items() if v is not None})
        return self


def invalid(message: str, **details: object) -> AgentTtyError:
    return AgentTtyError(ErrorCode.INVALID_INPUT, message, **details)


def not_found(session_id: str) -> AgentTtyError:
    return AgentTtyError(
        ErrorCode.SESSION_NOT_FOUND, f"no session {session_id!r}", sessionId=session_id
    )


def storage_error(message: str, path: str | None = None, **details: object) -> AgentTtyError:
    return AgentTtyError(ErrorCode.STORAGE_ERROR, message, path=path, **details)
