"""The system's refusals at create, told as what they are: a process limit, a full disk.

A host that cannot write its start-up records (the disk filled) often cannot write host.log
either, so it says why through the one channel left, its exit status: 64 + the errno of the
failed write. The create that launched it reads the status and names the error.
"""

from __future__ import annotations

import errno
import os

from agent_tty.protocol.errors import AgentTtyError, ErrorCode

PROCESS_REFUSALS = (errno.EAGAIN, errno.ENOMEM)
"""fork's errors when the system will not make one more process."""
STORAGE_EXIT_BASE = 64
"""A host's exit status 64 + errno: its start-up records could not be written (ENOSPC: 92)."""
STORAGE_ERRNOS = frozenset(
    getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EROFS", "EIO", "EACCES", "EPERM", "EFBIG", "EMFILE", "ENFILE", "ENOMEM")
    if hasattr(errno, name)
)
"""The errnos a status carries; any other reads as 64, "a write failed" (no other exit of the
host, such as Python's 120 for an unflushed stream, is mistaken for one)."""


def process_refused(err: OSError, what: str) -> AgentTtyError | None:
    """RESOURCE_LIMIT for a fork the system refused; None for any other error."""
    if err.errno not in PROCESS_REFUSALS:
        return None
    name = errno.errorcode.get(err.errno or 0)
    return AgentTtyError(
        ErrorCode.RESOURCE_LIMIT,
        f"{what}: the system refused a new process ({err.strerror or name}){limit_reached()}; nothing was left running",
        errno=name,
    )


def limit_reached() -> str:
    """The clause naming the process limits for a refusal's message; empty where the system
    names none."""
    from agent_tty.platform.system import current

    limit = current().process_limit()
    return f": a process limit is reached ({limit})" if limit else ""


def storage_exit(err: AgentTtyError) -> int:
    """The exit status of a host whose start-up write failed with `err` (a STORAGE_ERROR)."""
    number = getattr(errno, str(err.details.get("errno", "")), 0)
    return STORAGE_EXIT_BASE + number if number in STORAGE_ERRNOS else STORAGE_EXIT_BASE


def storage_refused(status: int | None, folder: object) -> AgentTtyError | None:
    """The STORAGE_ERROR a host's exit status tells; None when it tells none."""
    if status is None or status != STORAGE_EXIT_BASE and status - STORAGE_EXIT_BASE not in STORAGE_ERRNOS:
        return None
    number = status - STORAGE_EXIT_BASE
    name = errno.errorcode.get(number) if number else None
    why = f"{os.strerror(number)} ({name})" if name else "a write failed"
    return AgentTtyError(
        ErrorCode.STORAGE_ERROR,
        f"the session host could not write its records in {folder}: {why}; the program was not left running",
        path=str(folder),
        errno=name,
    )
