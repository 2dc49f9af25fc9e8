"""The program's group without a session token: proven by its leader's pid and start time.

The record (program.json's proof) holds the leader's start time. The group is the program's
(OWNED) while a live process of our uid is in process group `pid` and either the leader with
that start time still exists (alive, or a zombie nobody reaped yet) or, the leader gone, the
process is in the program's session (session id `pid`). Neither Darwin nor Linux gives a new
process a pid that is still a process group or session id, so while the session lives its id
names it alone; once it ended, a new process may take the pid, and its other start time reads
UNPROVEN. A whole new session at that pid whose leader also ended (setsid, fork, exit) looks
like the program's leftovers by its ids; but the pid is taken until the host reaps the leader,
so every process of such a session started after that reap. The host records the moment
(capture_reap, program.json's `reaped`), and a member proves the group only if it started no
later (ReapDatesMembers); any other member reads AMBIGUOUS, never signalled (ADR 0026). A
record is acted on only while its session folder exists (FallbackNeedsFolder).
"""

from __future__ import annotations

import os
import signal as signals
import sys
import time
from typing import Any

from agent_tty.platform.types import GroupRef, GroupVerdict
from agent_tty_plugins._posix import groups
from agent_tty_plugins.macos_ps import procs
from agent_tty_plugins.macos_ps.facts import other_boot, reaped_at, same_start, start_of, started_by

CAPTURE_LIMIT_S = 0.25
"""How long the capture waits for the child to lead its own session (TokenNamesProgram)."""
FROZEN_JUDGEMENTS = 3
"""How often a group that reads gone while its id is in use is stopped and judged again."""


def capture(pid: int, host_pid: int) -> dict[str, Any] | None:
    """The leader's start time once it leads its own session; None when it never did."""
    del host_pid  # the spawn's pid is the host's child: its setsid ran before its exec
    deadline = time.monotonic() + CAPTURE_LIMIT_S
    while True:
        try:
            leader = procs.read(pid)
        except PermissionError:
            return None
        if leader is None or leader.start is None:
            return None
        # An unreaped zombie is our child: its pid and start time still stand. macOS gives no
        # ids for one, but its setsid ran before the exec that spawn waited for.
        if (leader.sid == pid and leader.pgid == pid) or (not leader.live and leader.sid is None):
            return {"startTime": leader.start, "clock": procs.clock()}
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.002)


def capture_reap() -> dict[str, Any]:
    """Right after the host's waitpid: the moment, on the clock of the start times (RecordsReap).
    Read after the reap, so a member the program forked before it never reads later."""
    reaped: dict[str, Any] = {"reapedAt": procs.now(), "clock": procs.clock()}
    boot = procs.boot_id()
    if boot is not None:
        reaped["bootId"] = boot
    return reaped


def _ours(proc: procs.Proc) -> bool:
    return proc.uid is not None and proc.uid == os.geteuid()


def judge(group: GroupRef) -> tuple[GroupVerdict, procs.Proc | None]:
    """The verdict, and a live member of process group `pid` that proves it when OWNED."""
    start = start_of(group.proof, procs.clock())
    if not group.folder.is_dir() and not _our_unreaped_child(group, start):
        return GroupVerdict.GONE, None  # FallbackNeedsFolder: gc removed the session
    try:
        leader = procs.read(group.pid)
    except PermissionError:
        return GroupVerdict.UNKNOWN, None
    if leader is not None:
        if start is None or leader.start is None:
            return GroupVerdict.UNKNOWN, None  # nothing to compare
        if not same_start(leader.start, start):
            # No pid that is still a group or session id goes to a new process, so a new
            # process at the leader's pid means the program's whole group has ended.
            return GroupVerdict.UNPROVEN, None
        if leader.live:
            if leader.sid != group.pid:
                return GroupVerdict.UNKNOWN, None
            # The pid and start time are anyone's to read: only our own leader proves the
            # group. Another user's reads "cannot tell", not UNPROVEN, which reads the group
            # ended (ReusedIdReadsGone) and would record destroyed while it runs.
            return (GroupVerdict.OWNED, leader) if _ours(leader) else (GroupVerdict.UNKNOWN, None)
        # The leader is a zombie: its pid is still taken, so no other session can hold the
        # id, and what it left in its group still runs under its proof.
        return _judge_members(group, proven_leader=start is not None, reaped=None, leader_held=True)
    if other_boot(group.reaped, procs.boot_id()):
        return GroupVerdict.UNPROVEN, None  # nothing of the program outlived the reboot
    reaped = reaped_at(group.reaped, procs.clock())
    return _judge_members(group, proven_leader=start is not None, reaped=reaped, leader_held=False)


def _our_unreaped_child(group: GroupRef, start: float | None) -> bool:
    """The caller is the leader's parent and has not reaped it: the host, ending a session whose
    folder was removed from under it (ADR 0024). No record of it can be stale then: the pid
    names our child until we reap it, whatever happened to the folder."""
    if group.reaped is not None or start is None or procs.parent(group.pid) != os.getpid():
        return False
    leader = procs.read(group.pid)
    return leader is not None and leader.start is not None and same_start(leader.start, start)


def _judge_members(
    group: GroupRef, proven_leader: bool, reaped: float | None, leader_held: bool
) -> tuple[GroupVerdict, procs.Proc | None]:
    """The leader is gone or a zombie: a live member of the group that is in the program's
    session proves it, if it is surely the program's. While the leader holds its pid (a zombie)
    every member is. Once it was reaped, the id is free again when the program's session ends,
    and a new session at that pid (setsid, a fork, an exit) has members just like it; but no
    process that took the id can have started before the reap, so a member that started by
    then proves the group (ReapDatesMembers). One that started later, or any member when no
    reap was recorded (the host died first), reads AMBIGUOUS: never signalled (R15).
    A member can fork and end while one scan runs: scan twice before GONE."""
    cannot_tell = False
    ambiguous = False
    live_seen = False
    for _scan in range(2):
        scan = procs.scan_group(group.pid)
        cannot_tell = cannot_tell or scan.refused
        for member in scan.members:
            if not member.live:
                continue
            live_seen = True
            if member.sid == group.pid:
                if not (proven_leader and _ours(member)):
                    # Another user's process in the session (a setuid-root helper the program
                    # started), or no start time was recorded: it keeps the group alive, proves nothing.
                    cannot_tell = True
                elif leader_held or (reaped is not None and started_by(member.start, reaped)):
                    return GroupVerdict.OWNED, member
                else:
                    # The program's fork after the reap, or a session that took the id.
                    ambiguous = True
        if live_seen:
            break
    if ambiguous:
        return GroupVerdict.AMBIGUOUS, None
    if cannot_tell:
        return GroupVerdict.UNKNOWN, None
    return (GroupVerdict.UNPROVEN if live_seen else GroupVerdict.GONE), None


def _still_member(member: procs.Proc, pgid: int) -> bool:
    """Re-read right before the kill: the same process, still in the group."""
    try:
        again = procs.read(member.pid)
    except PermissionError:
        return False
    return (
        again is not None
        and again.live
        and member.start is not None
        and again.start is not None
        and same_start(again.start, member.start)
        and again.pgid == pgid
    )


def _frozen_judgement(group: GroupRef) -> GroupVerdict:
    """FreezesUnseenGroup: a fork chain whose members each live ~2 ms is almost never in view
    of a scan. SIGSTOP to the id stops every member at once, and a stopped member stays in view
    for the judge. Unless the verdict is OWNED the group gets SIGCONT again in this same step.

    SIGSTOP is the one signal that may reach a group before its proof: it ends nothing and is
    undone at once. Sent only while the record's folder exists and its start time can be
    compared (judge reads GONE otherwise), and never to our own group (nothing would undo it).
    """
    if start_of(group.proof, procs.clock()) is None or group.pid == os.getpgrp():
        return GroupVerdict.GONE
    for _attempt in range(FROZEN_JUDGEMENTS):
        if not group.folder.is_dir() or groups.probe_group(group.pid) is groups.Probe.NONE:
            return GroupVerdict.GONE
        groups.signal_group(group.pid, signals.SIGSTOP)
        verdict = GroupVerdict.UNKNOWN
        try:
            verdict, _member = judge(group)
        finally:
            if verdict is not GroupVerdict.OWNED:
                groups.signal_group(group.pid, signals.SIGCONT)
        if verdict is not GroupVerdict.GONE:
            return verdict
    return GroupVerdict.GONE


def kill(group: GroupRef, signal: int) -> GroupVerdict:
    """ProvesGroupOwnership: judge, re-read the proving member, signal; nothing unless OWNED.
    EPERM from a member of another user is ignored here (ProbeCountsDeniedGroup keeps the
    group alive for the waits)."""
    verdict, member = judge(group)
    if verdict is GroupVerdict.GONE and signal == signals.SIGKILL:
        verdict = _frozen_judgement(group)
        if verdict is GroupVerdict.OWNED:
            # Stopped members cannot fork: the kill reaches all of them; SIGCONT lets the
            # kernel finish them at once.
            groups.signal_group(group.pid, signals.SIGKILL)
            groups.signal_group(group.pid, signals.SIGCONT)
        return verdict
    if verdict is GroupVerdict.OWNED:
        if member is not None and _still_member(member, group.pid):
            groups.signal_group(group.pid, signal)
            return verdict
        verdict, member = judge(group)
        if verdict is GroupVerdict.OWNED and member is not None and _still_member(member, group.pid):
            groups.signal_group(group.pid, signal)
    return verdict


def _only_zombies_twice(pgid: int) -> bool:
    """Linux: gone when two scans in a row each show the group's processes and only zombies.
    A scan that shows none, or was refused a read, cannot tell."""
    for _scan in range(2):
        scan = procs.scan_group(pgid)
        if scan.refused or not scan.members or any(m.live for m in scan.members):
            return False
    return True


def alive(group: GroupRef) -> bool:
    """True when owned or when the answer is unknown; False when gone or someone else's."""
    verdict, _member = judge(group)
    if verdict in (GroupVerdict.OWNED, GroupVerdict.UNKNOWN, GroupVerdict.UNSHARED, GroupVerdict.AMBIGUOUS):
        return True
    if verdict is GroupVerdict.UNPROVEN:
        return False  # ReusedIdReadsGone: the id now names someone else's group
    probe = groups.probe_group(group.pid)
    if probe is groups.Probe.NONE:
        return False
    # The id is in use but no live member is in view: a fork chain that escapes the scans,
    # zombies, or processes we may not see (alive: ProbeCountsDeniedGroup).
    if probe is groups.Probe.FOUND:
        frozen = _frozen_judgement(group)
        if frozen is GroupVerdict.OWNED:
            groups.signal_group(group.pid, signals.SIGCONT)
            return True
        if frozen is GroupVerdict.AMBIGUOUS:
            return True  # a chain forked after the reap, or a stranger: no wait passes on it (R20)
        if frozen is GroupVerdict.UNPROVEN:
            return False
    if not sys.platform.startswith("linux"):
        # macOS: a zombie reads alive until it is reaped (the host reaps the leader, launchd
        # every orphan), as kill(-pgid, 0) still finds it; no scan tells it apart cheaply.
        return True
    return not _only_zombies_twice(group.pid)
