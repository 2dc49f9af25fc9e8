"""A program's group on Windows is its Job Object: proof, verdict and kill read the job itself.

The proof program.json keeps is the job's name (it carries a random part nobody else can guess)
with the session it was made for, the leader's pid and creation time, and the Terminal Services
session whose `Local\\` namespace holds the name. A job outlives no handle: KILL_ON_JOB_CLOSE
ends every member when the last handle closes (the host's, or a CLI's while it judges), so a job
that no longer opens by its name has no member left, and no pid is ever signalled: the kill is
TerminateJobObject through the handle the proof was just read with (R15 holds by construction:
a pid or a name taken by another user's job never receives it).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from agent_tty.platform.types import GroupRef, GroupVerdict
from agent_tty_plugins.windows_conpty import layer

KILL_EXIT_BASE = 128
"""A killed member exits 128 + the Stop number, as a POSIX shell reports a signal death."""


@dataclass
class Held:
    """A job this process made (the host): its handle keeps the job, and so its name, alive."""

    name: str
    handle: int
    session_id: str


_held: dict[int, Held] = {}
"""By program pid: the jobs the host spawned programs into (one host, one program)."""


def new_name(session_id: str) -> str:
    """`Local\\` is the logon session's namespace; the SID keeps users apart in it and the
    random part makes the name unguessable, so nobody else can make our job's name first."""
    return f"Local\\agent-tty-{layer.current().user_sid()}-{session_id}-{secrets.token_hex(16)}"


def hold(pid: int, held: Held) -> None:
    _held[pid] = held


def capture(pid: int) -> dict[str, Any] | None:
    """What proves the group later: only a job this process made for `pid` is one."""
    held = _held.get(pid)
    if held is None:
        return None
    win = layer.current()
    process = win.open_process(pid)
    created = None
    if process is not None:
        try:
            created = win.process_created(process)
        finally:
            win.close_handle(process)
    return {"job": held.name, "sessionId": held.session_id, "pid": pid, "created": created, "logon": win.logon_session()}


def _names_this_group(group: GroupRef) -> str | None:
    """The job's name when the proof was made for this very record (its session and pid); a
    proof copied into another session's record, or next to another pid, proves nothing."""
    proof = group.proof
    if not isinstance(proof, dict) or not isinstance(proof.get("job"), str):
        return None
    if proof.get("sessionId") != (group.session_id or group.folder.name) or proof.get("pid") != group.pid:
        return None
    return proof["job"]


def _without_proof(group: GroupRef) -> GroupVerdict:
    """No proof: never OWNED. A live pid is someone's (UNPROVEN), none is GONE."""
    win = layer.current()
    process = win.open_process(group.pid)
    if process is None:
        return GroupVerdict.GONE
    try:
        return GroupVerdict.GONE if win.process_exited(process) else GroupVerdict.UNPROVEN
    finally:
        win.close_handle(process)


def _open(group: GroupRef) -> tuple[GroupVerdict, int | None]:
    """The verdict, and the open job handle when OWNED (the caller closes it)."""
    name = _names_this_group(group)
    if name is None:
        return _without_proof(group), None
    win = layer.current()
    if group.proof.get("logon") != win.logon_session():  # type: ignore[union-attr]
        # Another logon session's `Local\\` namespace: the name cannot open from here, which
        # proves nothing about the job (a missing name is proof only where it was made).
        return GroupVerdict.UNSHARED, None
    try:
        job = win.open_job(name)
    except PermissionError:
        return GroupVerdict.UNKNOWN, None
    if job is None:
        return GroupVerdict.GONE, None  # no handle left: KILL_ON_JOB_CLOSE ended every member
    try:
        active = win.job_active(job)
    except OSError:
        win.close_handle(job)
        return GroupVerdict.UNKNOWN, None
    if active == 0:
        win.close_handle(job)
        return GroupVerdict.GONE, None
    return GroupVerdict.OWNED, job


def judge(group: GroupRef) -> GroupVerdict:
    verdict, job = _open(group)
    if job is not None:
        layer.current().close_handle(job)
    return verdict


def kill(group: GroupRef, signal: int) -> GroupVerdict:
    """Prove, then TerminateJobObject through the same handle: one call ends every member.
    Windows has no signals: every Stop but 0 ends the job (a hang-up gets no grace)."""
    verdict, job = _open(group)
    if job is None:
        return verdict
    win = layer.current()
    try:
        if signal != 0:
            win.terminate_job(job, KILL_EXIT_BASE + signal)
    finally:
        win.close_handle(job)
    return verdict


def alive(group: GroupRef) -> bool:
    return judge(group) in (GroupVerdict.OWNED, GroupVerdict.UNKNOWN, GroupVerdict.UNSHARED)


def release(group: GroupRef) -> bool:
    """The host lets its job go once nothing of it runs (closing it earlier would kill)."""
    held = _held.get(group.pid)
    if held is None:
        return True
    win = layer.current()
    if win.job_active(held.handle) > 0:
        return False
    win.close_handle(held.handle)
    del _held[group.pid]
    return True
