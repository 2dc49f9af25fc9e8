"""linux_autogroup: prove a program's group by its session and autogroup (Linux).

The token is the program's session id (its pid: it leads its own session), its autogroup
id and the boot id. setsid() gives every new session a new autogroup from a counter that
does not repeat within a boot, and fork() passes it on, so a group that later takes the
program's id carries another autogroup and never gets a kill (R15). Without a token the
leader's pid and start time prove the leader alone.

The token proves every process of the program's session, not only its process group: a job of
an interactive shell (bash with job control) gets a process group of its own but keeps the
session id and the autogroup. A SIGKILL (destroy, gc's leftovers, a host that gives up) reaches
the program's group with one killpg and every other carrier of the token by pid, each proven
right before its kill; any other signal (the `signal` command's SIGINT, the shutdown's SIGHUP)
goes to the program's group alone, as a terminal would send it. A process that calls setsid
leaves the session and the autogroup, and with them our reach.

Every part of a token is world-readable in /proc, so a record (data anyone who can write the
Home may have planted) could name another user's session. A process proves a group or a host
ours only when its real uid is our effective uid; another user's process that carries the
token (a setuid helper of the program, or a planted record) reads "cannot tell".
"""

from __future__ import annotations

import os
import signal as signals
import sys
import time

from agent_tty.platform import hookimpl
from agent_tty.platform.types import (
    CapturedProgram,
    GroupRef,
    GroupVerdict,
    HostVerdict,
    ProbeResult,
    SpawnRequest,
)
from agent_tty_plugins._posix import groups, procfs

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command that judges a host ~2 ms
    from typing import Any

    from agent_tty.platform.handle import ProgramHandle

MECHANISM = "linux_autogroup"
RANK = 50
CAPTURE_LIMIT_S = 0.25
"""How long the capture waits for the child to lead its own session (TokenNamesProgram)."""


def _ours(mechanism: str) -> bool:
    return mechanism == MECHANISM


# ---------------------------------------------------------------- choosing a platform


@hookimpl
def agent_tty_probe() -> ProbeResult:
    if not sys.platform.startswith("linux"):
        return ProbeResult(MECHANISM, False, RANK, "not Linux")
    try:
        own = procfs.read_autogroup("self")
    except OSError as err:
        return ProbeResult(MECHANISM, False, RANK, f"/proc/self/autogroup is not readable ({err.strerror})")
    if own is None:
        return ProbeResult(MECHANISM, False, RANK, "no /proc/self/autogroup (kernel without CONFIG_SCHED_AUTOGROUP)")
    if procfs.boot_id() is None:
        return ProbeResult(MECHANISM, False, RANK, "the boot id is not readable")
    if not procfs.proc_shows_own_pid_space():
        return ProbeResult(MECHANISM, False, RANK, "/proc shows another pid namespace")
    # A caller in the default autogroup (started by PID 1 or a service manager without setsid)
    # is fine: each session's leader calls setsid and so gets an autogroup of its own.
    return ProbeResult(
        MECHANISM, True, RANK,
        "autogroups and /proc are available; a process that calls setsid leaves the session's reach",
        {"autogroup": own},
    )


# ---------------------------------------------------------------- starting a program


@hookimpl
def agent_tty_spawn(request: SpawnRequest) -> ProgramHandle | None:
    if not _ours(request.mechanism):
        return None
    from agent_tty_plugins._posix.pty_spawn import spawn_in_pty

    return spawn_in_pty(request, held=True)


@hookimpl
def agent_tty_capture_program(mechanism: str, pid: int, host_pid: int) -> CapturedProgram | None:
    if not _ours(mechanism):
        return None
    return CapturedProgram(proof=capture_token(pid, host_pid))


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


def _token(group: GroupRef) -> int | None:
    return (group.proof or {}).get("autogroup")


@hookimpl
def agent_tty_runs_inside(mechanism: str, program_pid: int, host_identity: dict[str, Any] | None) -> bool | None:
    if not _ours(mechanism):
        return None
    try:
        sid = os.getsid(0)
    except OSError:
        return True
    if sid != 0:
        return sid == program_pid
    # Session id 0: our session's leader lies outside our pid namespace (a container's shell,
    # a CI runner). The program leads its own session, so when the host started it in our pid
    # namespace that session cannot be ours; anything else we cannot tell.
    return not _started_in_our_pid_space(host_identity)


def _started_in_our_pid_space(identity: dict[str, Any] | None) -> bool:
    if identity is None or identity.get("bootId") != procfs.boot_id():
        return False
    recorded = identity.get("pidNamespace")
    return recorded is not None and recorded == procfs.pid_namespace()


@hookimpl
def agent_tty_leave_program_group(mechanism: str) -> bool | None:
    if not _ours(mechanism):
        return None
    return True  # setsid already gave the re-run its own session, group and autogroup


# ---------------------------------------------------------------- the program's group


def _shares_host_pids(group: GroupRef) -> bool:
    if not procfs.proc_shows_own_pid_space():
        return False
    identity = group.host_identity
    if identity is None:
        # With a token but no host.json, nothing names the host's pid space.
        return _token(group) is None
    if identity.get("bootId") != procfs.boot_id():
        return True  # another boot: judged below as gone
    recorded = identity.get("pidNamespace")
    return recorded is None or recorded == procfs.pid_namespace()


def _run_by_us(pid: int) -> bool | None:
    """The process's real uid is our effective uid (procfs.read_real_uid says why the real
    one); None when /proc refused the read or the process ended."""
    try:
        uid = procfs.read_real_uid(pid)
    except PermissionError:
        return None
    return None if uid is None else uid == os.geteuid()


def _foreign_leader(group: GroupRef, token: int) -> bool:
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
    return leader.session == group.pid and autogroup == token and _run_by_us(group.pid) is False


def _judge(
    group: GroupRef, scans: int = 2, scanner: procfs.SessionScans | None = None
) -> tuple[GroupVerdict, procfs.ProcStat | None]:
    """The verdict, and a live member that carries the proof when OWNED: one of the program's
    own process group when one is in view (the group kill re-reads it), else a job of the
    session in a group of its own (the group is owned while any carrier of the token runs).
    A member can fork and end while one scan lists /proc: `scans` scans before "gone" (one
    does while the group is stopped, see _frozen_judgement, whose rounds share one `scanner`)."""
    if not _shares_host_pids(group):
        return GroupVerdict.UNSHARED, None
    proof = group.proof or {}
    if proof and proof.get("bootId") != procfs.boot_id():
        return GroupVerdict.GONE, None  # a reboot ended every process of that boot
    token_autogroup = _token(group)
    if token_autogroup is None:
        return _judge_leader(group)
    # Another user's leader reads "cannot tell", not UNPROVEN: UNPROVEN reads the group ended
    # (ReusedIdReadsGone), which for a program that exec'd sudo would record destroyed while
    # it runs. Neither verdict sends a signal.
    if _foreign_leader(group, token_autogroup):
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
                if _run_by_us(member.pid):
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
            # group; another user's reads "cannot tell" (see _judge for why not UNPROVEN).
            if _run_by_us(group.pid):
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


@hookimpl
def agent_tty_judge_group(group: GroupRef) -> GroupVerdict | None:
    if not _ours(group.mechanism):
        return None
    return _judge(group)[0]


FROZEN_JUDGEMENTS = 20
"""How often a group that reads gone while its id is in use is stopped and judged again. A
SIGCONT from another gc or destroy of the same session can let the chain run through one
judgement; it reads gone only when that happens to every one of them. The seed's bound, 10 x 2
SIGSTOP/SIGCONT pairs, whose lowering was rejected as a regression (docs/adr/0040)."""


def _frozen_judgement(group: GroupRef) -> GroupVerdict:
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
    if _token(group) is None or not procfs.proc_shows_own_pid_space():
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
            verdict, _member = _judge(group, scans=1, scanner=scanner)  # stopped members cannot fork out of view
        finally:
            if verdict is not GroupVerdict.OWNED:
                groups.signal_group(group.pid, signals.SIGCONT)
        if verdict is not GroupVerdict.GONE:
            return verdict
    return GroupVerdict.GONE


def _signal_proven(group: GroupRef, signal: int) -> GroupVerdict:
    verdict, member = _judge(group)
    if verdict is GroupVerdict.GONE and signal == signals.SIGKILL:
        verdict = _frozen_judgement(group)
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
        verdict, member = _judge(group)
        if verdict is GroupVerdict.OWNED and member is not None and _still_member(member, group.pid):
            groups.signal_group(group.pid, signal)
    return verdict


JOB_KILL_ROUNDS = 10
"""At most this many scans for jobs to kill in one SIGKILL; two in a row that show none end it."""


def _still_carrier(proc: procfs.ProcStat, sid: int, token: int) -> bool:
    """The process still carries the token: the session id, the autogroup and our uid. The stat
    is read last: its start time shows that the other reads were of the same process."""
    try:
        autogroup = procfs.read_autogroup(proc.pid)
        ours = _run_by_us(proc.pid)
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


def _kill_jobs(group: GroupRef) -> bool:
    """JobsOfTheSession: SIGKILL every carrier of the token outside the program's process group,
    each by pid right after its own proof; True when any was found.

    A job that forks: the groups of the jobs a scan proved get SIGSTOP first, which stops each
    whole group at once (a child forked during the delivery too), so that the next scan shows
    every member and none forks while it is proven and killed. As in _frozen_judgement the stop
    ends nothing and is undone in the same step (SIGCONT); only the kills need a proof, and each
    has its own. Two scans in a row without a job end it. A job none of whose processes any scan
    shows is beyond reach (procfs.scan_session reads the pids handed out last, so a fork chain
    is seen as long as the machine forks little else meanwhile).
    """
    token = _token(group)
    # The group-wide part of _judge's proof: the same pid space and boot (autogroup ids start
    # again at each boot), and no other user's leader (its session is not ours to kill in).
    if token is None or not _shares_host_pids(group):
        return False
    if (group.proof or {}).get("bootId") != procfs.boot_id() or _foreign_leader(group, token):
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


@hookimpl
def agent_tty_kill_group(group: GroupRef, signal: int) -> GroupVerdict | None:
    """Any signal goes to the program's process group (_signal_proven); a SIGKILL also ends the
    session's jobs (_kill_jobs). SIGINT, SIGHUP and the rest reach the jobs only as the program
    passes them on: a terminal's ^C goes to the foreground group alone as well."""
    if not _ours(group.mechanism):
        return None
    verdict = _signal_proven(group, signal)
    # GONE too: a job that forks fast may have escaped the judgement's scans.
    if signal == signals.SIGKILL and verdict in (GroupVerdict.OWNED, GroupVerdict.GONE) and _kill_jobs(group):
        # A live job proves the session owned, which keeps the program's group from the frozen
        # judgement; with the jobs ended a fork chain there that no scan showed gets it now.
        _signal_proven(group, signal)
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


@hookimpl
def agent_tty_group_alive(group: GroupRef) -> bool | None:
    if not _ours(group.mechanism):
        return None
    proof_boot = (group.proof or {}).get("bootId")
    if proof_boot is not None and proof_boot != procfs.boot_id():
        return False  # every process of that boot has ended; the id now names another
    # Owned while any carrier of the token runs, a job of the session in a group of its own too:
    # destroy waits for the jobs, and gc keeps the session while one runs.
    verdict, _member = _judge(group)
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
        frozen = _frozen_judgement(group)
        if frozen is GroupVerdict.OWNED:
            groups.signal_group(group.pid, signals.SIGCONT)
            return True
        if frozen is GroupVerdict.UNPROVEN:
            return False
    return not _only_zombies_twice(group.pid)


# ---------------------------------------------------------------- the host's identity


@hookimpl
def agent_tty_capture_host(mechanism: str, pid: int) -> dict[str, Any] | None:
    if not _ours(mechanism):
        return None
    try:
        stat = procfs.read_stat(pid)
    except PermissionError:
        return None
    boot = procfs.boot_id()
    if stat is None or boot is None:
        return None
    return {"bootId": boot, "startTime": stat.start_time, "pidNamespace": procfs.pid_namespace(pid)}


def _judge_host(pid: int, identity: dict[str, Any] | None) -> HostVerdict:
    if identity is None:
        # No record to compare: only "no such process" is proof of death.
        if pid <= 0:
            return HostVerdict.DEAD
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return HostVerdict.DEAD
        except PermissionError:
            return HostVerdict.UNKNOWN
        try:
            stat = procfs.read_stat(pid)
        except PermissionError:
            return HostVerdict.UNKNOWN
        if stat is not None and not procfs.is_live_state(stat.state):
            return HostVerdict.DEAD
        return HostVerdict.UNKNOWN
    if not procfs.proc_shows_own_pid_space():
        return HostVerdict.UNKNOWN
    boot = procfs.boot_id()
    recorded_boot = identity.get("bootId")
    if boot is None or not isinstance(recorded_boot, str) or not isinstance(identity.get("startTime"), int):
        return HostVerdict.UNKNOWN  # a record we cannot compare proves nothing (R2)
    if recorded_boot != boot:
        return HostVerdict.DEAD
    recorded_ns = identity.get("pidNamespace")
    if recorded_ns is not None and recorded_ns != procfs.pid_namespace():
        return HostVerdict.UNKNOWN
    try:
        stat = procfs.read_stat(pid)
    except PermissionError:
        return HostVerdict.UNKNOWN
    if stat is None or not procfs.is_live_state(stat.state):
        return HostVerdict.DEAD
    if stat.start_time != identity.get("startTime"):
        return HostVerdict.DEAD  # another process took the pid (R19)
    if not _run_by_us(pid):
        # Our host runs as us: another user's process that matches a (world-readable) identity
        # is no proof of our host. Unknown, not dead: "dead" would let a reconcile record the
        # session failed (R2) and destroy --force go on, while unknown kills nothing and writes
        # nothing (kill_host kills only an alive host).
        return HostVerdict.UNKNOWN
    return HostVerdict.ALIVE


@hookimpl
def agent_tty_judge_host(mechanism: str, pid: int, identity: dict[str, Any] | None) -> HostVerdict | None:
    if not _ours(mechanism):
        return None
    return _judge_host(pid, identity)


@hookimpl
def agent_tty_kill_host(mechanism: str, pid: int, identity: dict[str, Any]) -> HostVerdict | None:
    if not _ours(mechanism):
        return None
    verdict = _judge_host(pid, identity)
    if verdict is HostVerdict.ALIVE:
        try:
            os.kill(pid, signals.SIGKILL)
        except ProcessLookupError:
            return HostVerdict.DEAD
    return verdict
