"""The status policy table: every branch on a session's status asks this table."""

from __future__ import annotations

import enum

from agent_tty.frozen import Frozen


class Status(enum.StrEnum):
    RUNNING = "running"
    EXITING = "exiting"
    DESTROYING = "destroying"
    EXITED = "exited"
    FAILED = "failed"
    DESTROYED = "destroyed"


class StatusPolicy(Frozen):
    __slots__ = ("active", "terminal", "commandable", "collectable", "destroyed")
    active: bool
    """A host may still write the manifest."""
    terminal: bool
    """No host write follows (R3, R7)."""
    commandable: bool
    """The host accepts input, resize and signals."""
    collectable: bool
    """gc may remove the folder once its other checks pass."""
    destroyed: bool


STATUS_POLICY: dict[Status, StatusPolicy] = {
    Status.RUNNING: StatusPolicy(True, False, True, False, False),
    Status.EXITING: StatusPolicy(True, False, False, False, False),
    Status.DESTROYING: StatusPolicy(True, False, False, False, False),
    Status.EXITED: StatusPolicy(False, True, False, True, False),
    Status.FAILED: StatusPolicy(False, True, False, True, False),
    Status.DESTROYED: StatusPolicy(False, True, False, True, True),
}


def policy(status: Status | str) -> StatusPolicy:
    return STATUS_POLICY[Status(status)]


def is_active(status: Status | str) -> bool:
    return policy(status).active


def is_terminal(status: Status | str) -> bool:
    return policy(status).terminal
