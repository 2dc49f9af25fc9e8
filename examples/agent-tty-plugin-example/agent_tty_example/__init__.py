"""example_pgid: an example third-party platform plugin for agent-tty (Linux only).

It proves a program's process group by the leader's pid, boot id and start time, read from
/proc, and needs nothing else: no cgroups, no autogroups. The program leads its own session and
process group (spawn_in_pty makes it a session leader), so:

- while the leader runs, a leader at that pid with the recorded start time proves the group;
- once the host reaped the leader, a live process of ours whose session id is the program's pid
  proves it: Linux gives no new process a pid that is still a session or group id, so while a
  member of the program's session runs, its id names that session alone;
- a fork chain (each member forks its successor and ends) is rarely in view of one /proc scan,
  and the member a scan saw may be gone by the signal: then a SIGKILL stops the whole group
  first (SIGSTOP reaches every member at once), judges the stopped members, and kills only when
  they prove it, undoing the stop otherwise (ADR 0009).

Limits: a job of an interactive shell in a process group of its own is not reached by the kill
(only the program's process group is); a session that ended and whose id a new session leader
took, which then ended leaving members behind, reads as ours once no leader is left to compare.

It ranks 5, below every built-in, so it is chosen only when pinned (AGENT_TTY_MECHANISM=example_pgid).
"""

from __future__ import annotations

import os
import signal as signals
import sys
import time
from typing import Any, TypeGuard

from agent_tty.platform.base import MechanismPlugin
from agent_tty.platform.types import (
    CapturedProgram, GroupRef, GroupVerdict, HostVerdict, ProbeResult, ProgramHandle, SpawnRequest,
)
# agent-tty's public helpers for plugins: the PTY spawn, guarded group signals, /proc reads.
from agent_tty_plugins.posix import Probe, probe_group, procfs, signal_group, spawn_in_pty

MECHANISM = "example_pgid"
RANK = 5
CAPTURE_LIMIT_S = 0.25
FROZEN_JUDGEMENTS = 3


def _live(stat: procfs.ProcStat | None) -> TypeGuard[procfs.ProcStat]:
    return stat is not None and stat.state not in ("Z", "X", "x")


def _ours(pid: int) -> bool:
    """Its real uid is our effective uid; a process gone or a refused read proves nothing."""
    try:
        return procfs.read_real_uid(pid) == os.geteuid()
    except OSError:
        return False


def _same_pid_space(identity: dict[str, Any] | None) -> bool:
    """/proc shows our pid namespace, and it is the one recorded (if one was)."""
    recorded = (identity or {}).get("pidNamespace")
    return procfs.proc_shows_own_pid_space() and recorded in (None, procfs.pid_namespace())


def _signal(pgid: int, signal: int) -> Probe:
    # signal_group refuses 0, 1 and negative ids; a program's group is never our own either.
    if pgid == os.getpgrp():
        raise ValueError(f"refusing to signal our own process group {pgid}")
    return signal_group(pgid, signal)


class ExamplePgid(MechanismPlugin):
    mechanism = MECHANISM

    def probe(self) -> ProbeResult:
        if not sys.platform.startswith("linux"):
            return ProbeResult(MECHANISM, False, RANK, f"needs Linux's /proc (this is {sys.platform})")
        if procfs.boot_id() is None:
            return ProbeResult(MECHANISM, False, RANK, "the boot id is not readable")
        if not procfs.proc_shows_own_pid_space():
            return ProbeResult(MECHANISM, False, RANK, "/proc shows another pid namespace")
        try:
            procfs.read_stat("self")
        except OSError as err:
            return ProbeResult(MECHANISM, False, RANK, f"/proc/self/stat is not readable ({err.strerror})")
        how = "process groups proven by the leader's start time; an example, chosen only when pinned"
        return ProbeResult(MECHANISM, True, RANK, how)

    def spawn(self, request: SpawnRequest) -> ProgramHandle:
        # A new session and group led by the program, held before its exec until the host has
        # written program.json (held=True: return the handle itself, or forward its release()).
        return spawn_in_pty(request, held=True)

    def capture_program(self, pid: int, host_pid: int) -> CapturedProgram:
        """The leader's boot id and start time, once it leads its own session (bounded wait)."""
        boot = procfs.boot_id()
        deadline = time.monotonic() + CAPTURE_LIMIT_S
        while boot is not None:
            try:
                stat = procfs.read_stat(pid)
            except PermissionError:
                break
            if stat is not None and stat.session == stat.pgrp == pid and stat.ppid == host_pid:
                return CapturedProgram(proof={"bootId": boot, "startTime": stat.start_time})
            if stat is None or time.monotonic() >= deadline:  # else not its own leader yet: retry
                break
            time.sleep(0.002)
        return CapturedProgram(proof=None)  # no proof: the group is never judged ours

    def runs_inside(self, program_pid: int, host_identity: dict[str, Any] | None) -> bool:
        try:
            sid = os.getsid(0)
        except OSError:
            return True
        return sid == 0 or sid == program_pid  # 0: our leader is in another pid space, cannot tell

    # ------------------------------------------------------------ the program's group

    def _judge(self, group: GroupRef) -> tuple[GroupVerdict, procfs.ProcStat | None]:
        """The verdict, and the live member that proves it when OWNED (re-read before a kill)."""
        if not group.folder.is_dir():
            return GroupVerdict.GONE, None  # the session was removed: its record proves nothing
        if group.pid <= 1:
            return GroupVerdict.UNKNOWN, None  # names no program's group (0: ours, 1: init's)
        if not _same_pid_space(group.host_identity):
            return GroupVerdict.UNSHARED, None
        proof = group.proof or {}
        if not isinstance(proof.get("startTime"), int) or not isinstance(proof.get("bootId"), str):
            return GroupVerdict.UNKNOWN, None  # no proof: never ours to signal
        if proof["bootId"] != procfs.boot_id():
            return GroupVerdict.GONE, None  # a reboot ended every process of that boot
        try:
            leader = procfs.read_stat(group.pid)
        except PermissionError:
            return GroupVerdict.UNKNOWN, None
        if leader is not None and leader.start_time != proof["startTime"]:
            return GroupVerdict.UNPROVEN, None  # the pid is someone else's now
        if _live(leader):
            if leader.session != group.pid or not _ours(group.pid):
                return GroupVerdict.UNKNOWN, None
            return GroupVerdict.OWNED, leader
        # No live leader: a live process of ours in the program's session proves the group.
        cannot_tell = False
        for _scan in range(2):  # a member can fork and end while one scan runs
            scan = procfs.scan_group(group.pid)
            cannot_tell |= scan.refused
            for member in filter(_live, scan.members):
                if member.session == group.pid and _ours(member.pid):
                    return GroupVerdict.OWNED, member
                cannot_tell = True  # in the group, but another session's or another user's
        return (GroupVerdict.UNKNOWN if cannot_tell else GroupVerdict.GONE), None

    def _frozen_judgement(self, group: GroupRef, signal: int | None = None) -> GroupVerdict:
        """Stop the group, judge what is stopped, send `signal` if that proves it OWNED (stopped
        members cannot fork away), and undo the stop. SIGSTOP ends nothing and is undone in this
        same step: the one signal sent unproven."""
        for _attempt in range(FROZEN_JUDGEMENTS):
            if probe_group(group.pid) is not Probe.FOUND:
                return GroupVerdict.GONE
            _signal(group.pid, signals.SIGSTOP)
            try:
                verdict = self._judge(group)[0]
                if verdict is GroupVerdict.OWNED and signal is not None:
                    _signal(group.pid, signal)
            finally:
                _signal(group.pid, signals.SIGCONT)
            if verdict is not GroupVerdict.GONE:
                return verdict
        return GroupVerdict.GONE

    def judge_group(self, group: GroupRef) -> GroupVerdict:
        return self._judge(group)[0]

    def kill_group(self, group: GroupRef, signal: int) -> GroupVerdict:
        verdict, member = self._judge(group)
        if verdict is GroupVerdict.OWNED and member is not None:
            try:  # re-read the member that proved it right before the signal
                again = procfs.read_stat(member.pid)
            except PermissionError:
                again = None
            if _live(again) and again.start_time == member.start_time and again.pgrp == group.pid:
                _signal(group.pid, signal)
                return verdict
        # Nothing in view, or the member that proved it ended since: maybe a fork chain.
        if signal == signals.SIGKILL and verdict in (GroupVerdict.GONE, GroupVerdict.OWNED):
            verdict = self._frozen_judgement(group, signals.SIGKILL)
        return verdict

    def group_alive(self, group: GroupRef) -> bool:
        verdict = self._judge(group)[0]
        if verdict in (GroupVerdict.OWNED, GroupVerdict.UNKNOWN, GroupVerdict.UNSHARED):
            return True
        if verdict is GroupVerdict.UNPROVEN or not group.folder.is_dir():
            return False
        in_use = probe_group(group.pid)
        if in_use is not Probe.FOUND:
            return in_use is Probe.DENIED  # processes we may not see: cannot tell, so alive
        frozen = self._frozen_judgement(group)
        if frozen is not GroupVerdict.GONE:
            return frozen is not GroupVerdict.UNPROVEN
        # Only zombies nobody reaped yet hold the id, or a chain no stop caught: gone only
        # when two scans show none but zombies (the second only if the first shows none).
        scans = (procfs.scan_group(group.pid) for _scan in range(2))
        return any(scan.refused or any(map(_live, scan.members)) for scan in scans)

    # ------------------------------------------------------------ the host's identity

    def capture_host(self, pid: int) -> dict[str, Any] | None:
        try:
            stat, boot = procfs.read_stat(pid), procfs.boot_id()
        except PermissionError:
            return None
        if stat is None or boot is None:
            return None
        return {"bootId": boot, "startTime": stat.start_time, "pidNamespace": procfs.pid_namespace()}

    def judge_host(self, pid: int, identity: dict[str, Any] | None) -> HostVerdict:
        """ALIVE on proof, DEAD on proof (no such process, a zombie, another start time, another
        boot), UNKNOWN otherwise."""
        try:
            stat = procfs.read_stat(pid) if pid > 0 else None
        except PermissionError:
            return HostVerdict.UNKNOWN
        if identity is None:
            return HostVerdict.UNKNOWN if _live(stat) else HostVerdict.DEAD
        if not isinstance(identity.get("startTime"), int) or not isinstance(identity.get("bootId"), str):
            return HostVerdict.UNKNOWN
        if identity["bootId"] != procfs.boot_id():
            return HostVerdict.DEAD
        if not _same_pid_space(identity):
            return HostVerdict.UNKNOWN
        if not _live(stat) or stat.start_time != identity["startTime"]:
            return HostVerdict.DEAD
        return HostVerdict.ALIVE if _ours(pid) else HostVerdict.UNKNOWN

    def kill_host(self, pid: int, identity: dict[str, Any]) -> HostVerdict:
        verdict = self.judge_host(pid, identity)
        if verdict is HostVerdict.ALIVE:
            try:
                os.kill(pid, signals.SIGKILL)
            except ProcessLookupError:
                return HostVerdict.DEAD
        return verdict


plugin = ExamplePgid()
"""What the entry point names: `example_pgid = "agent_tty_example:plugin"`."""
