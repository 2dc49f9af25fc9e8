"""The program's group: judged by the token (or, without one, by the leader alone), signalled
only through that proof, and stopped to be judged again when no scan shows it (FreezesUnseenGroup)."""

from __future__ import annotations

import signal as signals

from agent_tty.platform.types import GroupRef, GroupVerdict
from agent_tty_plugins._posix import groups, procfs
from agent_tty_plugins.linux_autogroup import jobs
from agent_tty_plugins.linux_autogroup.proof import foreign_leader, run_by_us, shares_host_pids, token_of


def judge(
    group: GroupRef, scans: int = 2, scanner: procfs.SessionScans | None = None
) -> tuple[GroupVerdict, procfs.ProcStat | None]:
    """The verdict, and a live member that carries the proof when OWNED: one of the program's
    own process group when one is in view (the group kill re-reads it), else a job of the
    session in a group of its own (the group is owned while any carrier of the token runs).
    A member can fork and end while one scan lists /proc: `scans` scans before "gone" (one
    does while the group is stopped, see frozen_judgement, whose rounds share one `scanner`)."""
    if not shares_host_pids(group):
        return GroupVerdict.UNSHARED, None
    proof = group.proof or {}
    if proof and proof.get("bootId") != procfs.boot_id():
        return GroupVerdict.GONE, None  # a reboot ended every process of that boot
    token_autogroup = token_of(group)
    if token_autogroup is None:
        return _judge_leader(group)
    # Another user's leader reads "cannot tell", not UNPROVEN: UNPROVEN reads the group ended
    # (ReusedIdReadsGone), which for a program that exec'd sudo would record destroyed while
    # it runs. Neither verdict sends a signal.
    if foreign_leader(group, token_autogroup):
        return GroupVerdict.UNKNOWN, None
    cannot_tell = False
    live_seen = False
    job: procfs.ProcStat | None = None
    for _scan in range(scans):
        for member in (scanner or procfs.SessionScans(group.pid)).scan().members:
            if not procfs.is_live_state(member.state) and not procfs.has_live_thread(member.pid):
                continue
            try:
                autogroup = procfs.read_autogroup(member.pid)
            except OSError:
                cannot_tell = True
                continue
            if autogroup is None:
                continue  # it ended between the reads: no witness either way
            if member.session == group.pid and autogroup == token_autogroup:
                if run_by_us(member.pid):
                    if member.pgrp == group.pid:
                        return GroupVerdict.OWNED, member
                    job = job or member
                    continue
                # Another user's process with the token (a setuid-root helper the program
                # started): beyond our kill, it keeps the group alive but proves nothing.
                cannot_tell = True
            live_seen = True
        if job is not None:
            return GroupVerdict.OWNED, job
        if live_seen:
            break
    if cannot_tell:
        return GroupVerdict.UNKNOWN, None
    return (GroupVerdict.UNPROVEN if live_seen else GroupVerdict.GONE), None


def _judge_leader(group: GroupRef) -> tuple[GroupVerdict, procfs.ProcStat | None]:
    """No token: only the leader itself, by pid, boot id and start time, proves the group."""
    if not group.folder.is_dir():
        return GroupVerdict.GONE, None  # FallbackNeedsFolder: gc removed the session
    start = (group.proof or {}).get("startTime")
    try:
        leader = procfs.read_stat(group.pid)
    except PermissionError:
        return GroupVerdict.UNKNOWN, None
    if leader is not None and procfs.is_live_state(leader.state):
        if leader.session == group.pid and start is not None and leader.start_time == start:
            # The pid and start time are anyone's to read: only our own leader proves the
            # group; another user's reads "cannot tell" (see judge for why not UNPROVEN).
            if run_by_us(group.pid):
                return GroupVerdict.OWNED, leader
            return GroupVerdict.UNKNOWN, None
        if start is not None and leader.start_time != start:
            # Linux gives no pid that is still a group or session id to a new process, so a
            # new process at the leader's pid means the program's whole group has ended.
            return GroupVerdict.UNPROVEN, None
        return GroupVerdict.UNKNOWN, None
    if procfs.group_members(group.pid):
        return GroupVerdict.UNKNOWN, None  # leftovers we cannot tell from a new group
    return GroupVerdict.GONE, None


def _still_member(member: procfs.ProcStat, pgid: int) -> bool:
    try:
        again = procfs.read_stat(member.pid)
    except PermissionError:
        return False
    return again is not None and again.start_time == member.start_time and again.pgrp == pgid


FROZEN_JUDGEMENTS = 20
"""How often a group that reads gone while its id is in use is stopped and judged again. A
SIGCONT from another gc or destroy of the same session can let the chain run through one
judgement; it reads gone only when that happens to every one of them. The seed's bound, 10 x 2
SIGSTOP/SIGCONT pairs, whose lowering was rejected as a regression (docs/adr/0040)."""


def frozen_judgement(group: GroupRef) -> GroupVerdict:
    """FreezesUnseenGroup: a fork chain whose members each live ~2 ms is almost never in view
    of a /proc scan. SIGSTOP to the id stops every member at once (a child forked during the
    delivery gets it too), and a stopped member stays in view for the judge. Whatever the
    verdict, the group gets SIGCONT again; only an OWNED verdict is acted on by the caller.

    Sent only while the id is in use and /proc shows our own pid space (else the id could
    name a group of ours in another namespace). SIGSTOP is the one signal that may reach a
    group before its proof: it is undone in the same step and ends nothing.

    The judgement reads the whole session: a stopped member of the group, or a job of the
    session, proves the id. While any process of the session runs, its id (the program's pid)
    is held, so no other group can have taken it.
    """
    if token_of(group) is None or not procfs.proc_shows_own_pid_space():
        return GroupVerdict.GONE
    # The rounds share their scans: each reads only the processes new since the last, and the
    # group's members (procfs.SessionScans), so 20 rounds cost about one full scan.
    scanner = procfs.SessionScans(group.pid)
    for _attempt in range(FROZEN_JUDGEMENTS):
        if groups.probe_group(group.pid) is groups.Probe.NONE:
            return GroupVerdict.GONE
        groups.signal_group(group.pid, signals.SIGSTOP)
        verdict = GroupVerdict.UNKNOWN
        try:
            verdict, _member = judge(group, scans=1, scanner=scanner)  # stopped members cannot fork out of view
        finally:
            if verdict is not GroupVerdict.OWNED:
                groups.signal_group(group.pid, signals.SIGCONT)
        if verdict is not GroupVerdict.GONE:
            return verdict
    return GroupVerdict.GONE


def signal_proven(group: GroupRef, signal: int) -> GroupVerdict:
    verdict, member = judge(group)
    if verdict is GroupVerdict.GONE and signal == signals.SIGKILL:
        verdict = frozen_judgement(group)
        if verdict is GroupVerdict.OWNED:
            # Stopped members cannot fork: the kill reaches all of them; SIGCONT lets the
            # kernel finish them at once.
            groups.signal_group(group.pid, signals.SIGKILL)
            groups.signal_group(group.pid, signals.SIGCONT)
        return verdict
    if verdict is GroupVerdict.OWNED:
        # The member's re-read and the kill are adjacent statements: the window in which the
        # whole group could end and its id be taken is a few microseconds.
        if member is not None and _still_member(member, group.pid):
            groups.signal_group(group.pid, signal)
            return verdict
        verdict, member = judge(group)
        if verdict is GroupVerdict.OWNED and member is not None and _still_member(member, group.pid):
            groups.signal_group(group.pid, signal)
    return verdict


def kill(group: GroupRef, signal: int) -> GroupVerdict:
    """Any signal goes to the program's process group (signal_proven); a SIGKILL also ends the
    session's jobs (kill_jobs). SIGINT, SIGHUP and the rest reach the jobs only as the program
    passes them on: a terminal's ^C goes to the foreground group alone as well."""
    verdict = signal_proven(group, signal)
    # GONE too: a job that forks fast may have escaped the judgement's scans.
    if signal == signals.SIGKILL and verdict in (GroupVerdict.OWNED, GroupVerdict.GONE) and jobs.kill_jobs(group):
        # A live job proves the session owned, which keeps the program's group from the frozen
        # judgement; with the jobs ended a fork chain there that no scan showed gets it now.
        signal_proven(group, signal)
        return GroupVerdict.OWNED
    return verdict


def _only_zombies_twice(pgid: int) -> bool:
    """Gone when two scans in a row each show the group's processes and only zombies. A scan
    that shows none, or was refused a read, cannot tell (hidepid hides other users)."""
    for _scan in range(2):
        scan = procfs.scan_group(pgid)
        if scan.refused or not scan.members:
            return False
        if any(procfs.is_live_state(m.state) or procfs.has_live_thread(m.pid) for m in scan.members):
            return False
    return True


def alive(group: GroupRef) -> bool:
    proof_boot = (group.proof or {}).get("bootId")
    if proof_boot is not None and proof_boot != procfs.boot_id():
        return False  # every process of that boot has ended; the id now names another
    # Owned while any carrier of the token runs, a job of the session in a group of its own too:
    # destroy waits for the jobs, and gc keeps the session while one runs.
    verdict, _member = judge(group)
    if verdict in (GroupVerdict.OWNED, GroupVerdict.UNKNOWN, GroupVerdict.UNSHARED):
        return True
    if verdict is GroupVerdict.UNPROVEN:
        return False  # ReusedIdReadsGone: the id now names someone else's group
    probe = groups.probe_group(group.pid)
    if probe is groups.Probe.NONE:
        return False
    # The id is in use but no live member is in view: a fork chain that escapes the scans
    # (stop it and look again: GcFreezesUnseenGroup), zombies that nobody reaps (gone when two
    # scans show only zombies), or processes /proc hides (alive: ProbeCountsDeniedGroup).
    if probe is groups.Probe.FOUND:
        frozen = frozen_judgement(group)
        if frozen is GroupVerdict.OWNED:
            groups.signal_group(group.pid, signals.SIGCONT)
            return True
        if frozen is GroupVerdict.UNPROVEN:
            return False
    return not _only_zombies_twice(group.pid)
