"""JobsOfTheSession: a SIGKILL ends every carrier of the token outside the program's own process
group (the jobs of a shell with job control, each in a group of its own), each by pid right after
its own proof."""

from __future__ import annotations

import os
import signal as signals

from agent_tty.platform.types import GroupRef
from agent_tty_plugins._posix import groups, procfs
from agent_tty_plugins.linux_autogroup.proof import foreign_leader, run_by_us, shares_host_pids, token_of


JOB_KILL_ROUNDS = 10
"""At most this many scans for jobs to kill in one SIGKILL; two in a row that show none end it."""


def _still_carrier(proc: procfs.ProcStat, sid: int, token: int) -> bool:
    """The process still carries the token: the session id, the autogroup and our uid. The stat
    is read last: its start time shows that the other reads were of the same process."""
    try:
        autogroup = procfs.read_autogroup(proc.pid)
        ours = run_by_us(proc.pid)
        again = procfs.read_stat(proc.pid)
    except OSError:
        return False
    return (
        again is not None
        and again.start_time == proc.start_time
        and again.session == sid
        and autogroup == token
        and ours is True
    )


def _jobs(group: GroupRef, token: int, killed: set[tuple[int, int]]) -> list[procfs.ProcStat]:
    """Live carriers of the token outside the program's own process group (the jobs of a shell
    with job control, each in a group of its own), less those already killed."""
    found = []
    for proc in procfs.scan_session(group.pid).members:
        if proc.session != group.pid or proc.pgrp == group.pid or (proc.pid, proc.start_time) in killed:
            continue
        if not procfs.is_live_state(proc.state) and not procfs.has_live_thread(proc.pid):
            continue
        if _still_carrier(proc, group.pid, token):
            found.append(proc)
    return found


def _kill_carrier(proc: procfs.ProcStat, sid: int, token: int) -> None:
    """Prove the process a carrier once more and SIGKILL it, by pid, in one step. A pidfd opened
    before the proof names the process the proof read: no reuse of the pid comes between
    (without pidfds, a kernel before 5.3, the kill by pid follows the proof at once)."""
    try:
        fd: int | None = os.pidfd_open(proc.pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):
        fd = None
    try:
        if _still_carrier(proc, sid, token):
            if fd is not None:
                signals.pidfd_send_signal(fd, signals.SIGKILL)
            else:
                os.kill(proc.pid, signals.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    finally:
        if fd is not None:
            os.close(fd)


def kill_jobs(group: GroupRef) -> bool:
    """JobsOfTheSession: SIGKILL every carrier of the token outside the program's process group,
    each by pid right after its own proof; True when any was found.

    A job that forks: the groups of the jobs a scan proved get SIGSTOP first, which stops each
    whole group at once (a child forked during the delivery too), so that the next scan shows
    every member and none forks while it is proven and killed. As in frozen_judgement the stop
    ends nothing and is undone in the same step (SIGCONT); only the kills need a proof, and each
    has its own. Two scans in a row without a job end it. A job none of whose processes any scan
    shows is beyond reach (procfs.scan_session reads the pids handed out last, so a fork chain
    is seen as long as the machine forks little else meanwhile).
    """
    token = token_of(group)
    # The group-wide part of judge's proof: the same pid space and boot (autogroup ids start
    # again at each boot), and no other user's leader (its session is not ours to kill in).
    if token is None or not shares_host_pids(group):
        return False
    if (group.proof or {}).get("bootId") != procfs.boot_id() or foreign_leader(group, token):
        return False
    killed: set[tuple[int, int]] = set()
    quiet = 0
    for _round in range(JOB_KILL_ROUNDS):
        jobs = _jobs(group, token, killed)
        if not jobs:
            quiet += 1
            if quiet == 2:
                break
            continue
        quiet = 0
        # Never our own group: nothing would undo that stop (a destroy the program runs re-runs
        # in a session of its own, so this is only a guard).
        stopped = sorted({job.pgrp for job in jobs if job.pgrp > 1 and job.pgrp != os.getpgrp()})
        for pgid in stopped:
            groups.signal_group(pgid, signals.SIGSTOP)
        try:
            for job in _jobs(group, token, killed):
                _kill_carrier(job, group.pid, token)
                killed.add((job.pid, job.start_time))
        finally:
            for pgid in stopped:
                groups.signal_group(pgid, signals.SIGCONT)
    return bool(killed)
