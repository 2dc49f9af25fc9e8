"""The token and what it proves: the program's session id, autogroup and boot id, read at the
capture (TokenNamesProgram), and the checks every judgement of this plugin shares: the same pid
space as the host's (UnsharedGroupReadsUnknown), our uid, another user's leader."""

from __future__ import annotations

import os
import time

from agent_tty.platform.types import GroupRef
from agent_tty_plugins._posix import procfs

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command that judges a host ~2 ms
    from typing import Any


CAPTURE_LIMIT_S = 0.25
"""How long the capture waits for the child to lead its own session (TokenNamesProgram)."""


def capture_token(pid: int, host_pid: int) -> dict[str, Any] | None:
    """Read stat, autogroup, stat again; keep the autogroup only when the second read shows
    the program leading its own session with the same start time and the host as parent,
    and the autogroup differs from the host's own (TokenNamesProgram).

    Without an autogroup the proof still names the leader by boot id and start time.
    """
    boot = procfs.boot_id()
    if boot is None:
        return None
    try:
        host_autogroup = procfs.read_autogroup("self")
    except OSError:
        host_autogroup = None
    deadline = time.monotonic() + CAPTURE_LIMIT_S
    while True:
        try:
            first = procfs.read_stat(pid)
            autogroup = procfs.read_autogroup(pid)
            second = procfs.read_stat(pid)
        except PermissionError:
            return None
        if first is None or second is None:
            return None
        # A leader that already exited is our unreaped zombie: its pid, session, start time and
        # autogroup still stand, and what it left behind (sleep &) carries the same token.
        leads_own_session = (
            second.session == pid
            and second.pgrp == pid
            and second.ppid == host_pid
            and second.start_time == first.start_time
        )
        if (
            leads_own_session
            and autogroup not in (None, procfs.DEFAULT_AUTOGROUP)
            and host_autogroup is not None
            and autogroup != host_autogroup
        ):
            return {"bootId": boot, "startTime": second.start_time, "autogroup": autogroup}
        if time.monotonic() >= deadline:
            if leads_own_session:
                return {"bootId": boot, "startTime": second.start_time, "autogroup": None}
            return None
        time.sleep(0.002)


def token_of(group: GroupRef) -> int | None:
    return (group.proof or {}).get("autogroup")


def started_in_our_pid_space(identity: dict[str, Any] | None) -> bool:
    if identity is None or identity.get("bootId") != procfs.boot_id():
        return False
    recorded = identity.get("pidNamespace")
    return recorded is not None and recorded == procfs.pid_namespace()


def shares_host_pids(group: GroupRef) -> bool:
    if not procfs.proc_shows_own_pid_space():
        return False
    identity = group.host_identity
    if identity is None:
        # With a token but no host.json, nothing names the host's pid space.
        return token_of(group) is None
    if identity.get("bootId") != procfs.boot_id():
        return True  # another boot: judged below as gone
    recorded = identity.get("pidNamespace")
    return recorded is None or recorded == procfs.pid_namespace()


def run_by_us(pid: int) -> bool | None:
    """The process's real uid is our effective uid (procfs.read_real_uid says why the real
    one); None when /proc refused the read or the process ended."""
    try:
        uid = procfs.read_real_uid(pid)
    except PermissionError:
        return None
    return None if uid is None else uid == os.geteuid()


def foreign_leader(group: GroupRef, token: int) -> bool:
    """The recorded leader runs and carries the token, but as another user: the record names
    another user's session, or our program exec'd a setuid program that took another real uid.
    Either way no member proves the group ours: a process of our uid inside another user's
    session (root's, when root judges) is not ours to kill."""
    try:
        leader = procfs.read_stat(group.pid)
        autogroup = procfs.read_autogroup(group.pid)
    except OSError:
        return False  # the scan meets the same refusal
    if leader is None or not procfs.is_live_state(leader.state):
        return False
    return leader.session == group.pid and autogroup == token and run_by_us(group.pid) is False
