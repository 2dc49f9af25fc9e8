"""The behavioural contract kit: real processes through a plugin's hooks, one check per promise.

`check_plugin_behaviour(plugin, mechanism)` registers nothing globally. It registers the plugin in
a private pluggy PluginManager and calls each hook the way the core's manager does (only the
arguments the hook declares), acting itself as the host: it spawns the programs, captures their
proof with its own pid as the host's, and passes its own captured identity in every GroupRef.

Every failure is an AssertionError whose message starts with a tag from TAGS. Everything the
kit starts it ends in a `finally`, by pid or by the id of a group it spawned (never a kill of
our own group, of every process, or by name): strangers are its own children; a program's group is signalled only while its
leader is the kit's unreaped child, or a process that carries the kit's marker (or, for a fork
chain, one whose beat moves) is in it: either holds the group's id.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_tty.platform.types import (
    GroupRef,
    GroupVerdict,
    HostVerdict,
    ProbeResult,
    ProgramHandle,
    SpawnRequest,
)

TAGS: dict[str, str] = {
    "shape": "the hook names, the probe, or 'not my mechanism' (agent_tty.platform.contract)",
    "probe-raises": "agent_tty_probe must answer (unusable, with a reason), never raise",
    "signals-without-proof": "kill_group signalled, or judged OWNED, a group its proof does not name (R15)",
    "spawn-not-a-leader": "spawn must start the program as the leader of a new session and process group",
    "judges-live-group-gone": "judge_group/group_alive of the plugin's own running group must read OWNED/True",
    "kill-spares-own-group": "kill_group(SIGKILL) of the plugin's own running group must return OWNED and end it",
    "judges-live-host-dead": "capture_host + judge_host of a live process must read ALIVE",
    "judges-dead-host-alive": "judge_host must not read ALIVE for a reaped process or another process's identity",
    "kills-unproven-host": "kill_host must not kill a process the identity does not prove (R19)",
    "fork-chain-survives-kill": "kill_group(SIGKILL) must end every member, a fork chain too, or read AMBIGUOUS and alive (R16)",
    "unseen-chain-survives-kill": "kill_group(SIGKILL) must end a fork chain no scan shows (freeze it inside the step), or read AMBIGUOUS and alive",
    "alive-trusts-one-judgement": "group_alive must read True on every call while a fork chain no scan shows runs (a wait must not pass on one scan)",
    "runs-inside-says-outside": "runs_inside must read True in the program itself and in a job of its session in a group of its own",
    "judges-ended-group-live": "judge_group must read GONE once the group was killed",
    "leaks-zombie": "the program must be reaped by poll_exit once it ended",
    "leaks-fd": "the kit's open fds must be back to their count once the handle is closed",
    "release-fails": "release_group must return True once nothing of the group runs",
    "sweep-not-a-list": "sweep(home, []) must return a list",
    "program-did-not-run": "spawn must run the program it was given",
}

CHAIN_SCRIPT = r"""
import os, signal, sys, time
# The leader's exit hangs up the terminal's foreground group, which the chain is in.
signal.signal(signal.SIGHUP, signal.SIG_IGN)
beat, lifetime, step = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
deadline = time.monotonic() + lifetime
while time.monotonic() < deadline:
    if os.fork():
        os._exit(0)
    fd = os.open(beat, os.O_WRONLY | os.O_CREAT, 0o600)
    os.pwrite(fd, b"%020.6f" % time.time(), 0)  # one width, no truncation: never read empty
    os.close(fd)
    time.sleep(step)
"""
"""A fork chain: each member forks its successor and exits, so a scan rarely sees one.
argv: MARKER BEAT LIFETIME STEP; the marker only names the chain's processes."""

SLEEPER_SCRIPT = "import sys, time; time.sleep(float(sys.argv[2]))"
"""argv: MARKER SECONDS. Every signal the core sends (Stop: HUP, INT, TERM, KILL) ends it."""

UNSEEN_CHAIN_STEP_S = 0.0
"""The chain of check_unseen_fork_chain forks its successor at once: each member lives well under
a millisecond, so a listing of /proc almost never shows one alive; only a freeze (or an atomic
kill such as cgroup.kill) is sure to stop it."""

INSIDE_SCRIPT = r"""
import json, os, pickle, sys, importlib
marker, spec_path, result_path = sys.argv[1:4]
with open(spec_path, "rb") as handle:
    spec = pickle.load(handle)

def answer():
    import pluggy
    from agent_tty.platform import hookspecs
    try:
        if spec.get("module"):
            plugin = importlib.import_module(spec["module"])
        else:
            try:
                plugin = pickle.loads(spec["pickle"]) if spec.get("pickle") else None
            except Exception:
                plugin = None
            if plugin is None:
                module, _, qualname = spec["class"].partition(":")
                target = importlib.import_module(module)
                for part in qualname.split("."):
                    target = getattr(target, part)
                plugin = target()
    except Exception as err:
        return {"load": f"{type(err).__name__}: {err}"}
    pm = pluggy.PluginManager("agent_tty")
    pm.add_hookspecs(hookspecs)
    pm.register(plugin, name=spec["mechanism"])
    kwargs = {"mechanism": spec["mechanism"], "program_pid": int(spec["program_pid"] or os.getsid(0)),
              "host_identity": spec["identity"]}
    for impl in pm.hook.agent_tty_runs_inside.get_hookimpls():
        if not (impl.hookwrapper or impl.wrapper):
            try:
                return {"answer": impl.function(*(kwargs[arg] for arg in impl.argnames))}
            except Exception as err:
                return {"raised": f"{type(err).__name__}: {err}"}
    return {"answer": None}

spec["program_pid"] = os.getpid()
result = {"leader": answer()}
read, write = os.pipe()
child = os.fork()
if child == 0:
    os.close(read)
    os.setpgid(0, 0)  # a job of a shell with job control: a group of its own, the same session
    os.write(write, json.dumps(answer(), default=repr).encode())
    os._exit(0)
os.close(write)
chunks = []
while True:
    chunk = os.read(read, 65536)
    if not chunk:
        break
    chunks.append(chunk)
os.waitpid(child, 0)
result["job"] = json.loads(b"".join(chunks) or b'{"raised": "the job wrote nothing"}')
with open(result_path + ".tmp", "w") as handle:
    json.dump(result, handle, default=repr)
os.rename(result_path + ".tmp", result_path)
"""
"""argv: MARKER SPEC RESULT. Loads the plugin the spec names, asks runs_inside in the program
itself and in a child in a process group of its own, and writes both answers to RESULT."""

CHAIN_STEP_S = 0.005
CHAIN_QUIET_S = 1.0
"""How long a killed chain's beat must stay still before it counts as ended."""
START_GAP_S = 0.05
SETTLE_S = 0.3
"""How long a signal that was sent gets to show (a SIGKILLed stranger to end)."""


@dataclass
class BehaviourReport:
    """What ran: `passed` names each check that passed, `skipped` maps a check to the reason it
    did not run (the probe said the plugin cannot work here). A broken promise raises instead."""

    mechanism: str
    probe: ProbeResult
    passed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def _fail(tag: str, message: str) -> AssertionError:
    assert tag in TAGS, tag
    return AssertionError(f"[{tag}] {message}")


def _wait_for(check: Callable[[], Any], timeout: float, interval: float = 0.01) -> Any:
    """The first truthy value of `check` within `timeout`, else the last (falsy) one."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


# ---------------------------------------------------------------- a POSIX view of processes


@dataclass(frozen=True)
class _Proc:
    pid: int
    pgid: int
    state: str


def _proc_stat(pid: int) -> _Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().decode("utf-8", "replace").rpartition(")")[2].split()
    except OSError:
        return None
    return _Proc(pid, int(fields[2]), fields[0])


def _marked(marker: str) -> list[_Proc]:
    """Live processes (zombies left out) whose command line carries `marker`, this one aside.
    /proc where it exists (the environment too: a child the program started carries the kit's
    variable), else `ps -eo pid=,pgid=,stat=,args=`."""
    needle = marker.encode()
    found = []
    if os.path.isdir("/proc/self"):
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == os.getpid():
                continue
            hit = False
            for part in ("cmdline", "environ"):
                try:
                    with open(f"/proc/{name}/{part}", "rb") as handle:
                        hit = needle in handle.read()
                except OSError:
                    continue
                if hit:
                    break
            proc = _proc_stat(int(name)) if hit else None
            if proc is not None and proc.state not in ("Z", "X"):
                found.append(proc)
        return found
    listing = subprocess.run(["ps", "-eo", "pid=,pgid=,stat=,args="], capture_output=True, text=True, check=False)
    for line in listing.stdout.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and marker in parts[3] and int(parts[0]) != os.getpid() and not parts[2].startswith("Z"):
            found.append(_Proc(int(parts[0]), int(parts[1]), parts[2]))
    return found


def _state(pid: int) -> str | None:
    proc = _proc_stat(pid)
    if proc is not None:
        return proc.state
    done = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, check=False)
    return done.stdout.strip() or None


def _fd_count() -> int:
    return len(os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"))


def _fds() -> list[str]:
    folder = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    described = []
    for name in os.listdir(folder):
        try:
            described.append(f"{name} -> {os.readlink(os.path.join(folder, name))}")
        except OSError:
            described.append(name)
    return sorted(described)


# ---------------------------------------------------------------- the kit, acting as a host


@dataclass
class _Program:
    handle: ProgramHandle
    session_id: str
    folder: Path
    group: GroupRef | None = None
    closed: bool = False


class _Kit:
    def __init__(self, plugin: Any, mechanism: str, workdir: Path, timeout: float) -> None:
        import pluggy

        from agent_tty.platform import hookspecs

        self.plugin = plugin
        self.mechanism = mechanism
        self.timeout = timeout
        self.home = workdir / "home"
        self.marker = f"agent-tty-kit-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._pm = pluggy.PluginManager("agent_tty")
        self._pm.add_hookspecs(hookspecs)
        self._pm.register(plugin, name=mechanism)
        self._strangers: list[subprocess.Popen[bytes]] = []
        self._programs: list[_Program] = []
        self._count = 0
        self.chains: list[tuple[int, Path, float]] = []
        """Fork chains the kit's programs run: group id, beat file, when the chain ends itself."""
        self.host_identity: dict[str, Any] | None = None
        self.inside_program = True

    def call(self, name: str, **kwargs: Any) -> Any:
        """Hook `name` of this plugin with the arguments it declares, as the manager calls it."""
        for impl in getattr(self._pm.hook, name).get_hookimpls():
            if not (impl.hookwrapper or impl.wrapper):
                return impl.function(*(kwargs[arg] for arg in impl.argnames))
        return None

    def implements(self, name: str) -> bool:
        return any(not (impl.hookwrapper or impl.wrapper) for impl in getattr(self._pm.hook, name).get_hookimpls())

    def stranger(self, role: str) -> subprocess.Popen[bytes]:
        """A process the plugin never spawned, leading a session and group of its own.

        Started a few clock ticks after anything the kit started before: start times are read
        in ticks (10 ms), and a process that takes another's pid starts far later than that."""
        time.sleep(START_GAP_S)
        process = subprocess.Popen(
            [sys.executable, "-c", SLEEPER_SCRIPT, f"{self.marker}-{role}", "300"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._strangers.append(process)
        return process

    def spawn(self, argv: tuple[str, ...], env: dict[str, str] | None = None) -> _Program:
        """The plugin's spawn of `argv` for a new session of the kit's Home, whose folder exists."""
        self._count += 1
        session_id = f"kit{self._count}-{uuid.uuid4().hex[:8]}"
        folder = self.home / "sessions" / session_id
        folder.mkdir(parents=True)
        env = {**os.environ, **(env or {}), "AGENT_TTY_BEHAVIOUR_KIT": self.marker}
        request = SpawnRequest(self.mechanism, argv, env, str(folder), 80, 24, session_id, str(self.home))
        handle = self.call("agent_tty_spawn", request=request)
        if handle is None:
            raise _fail("spawn-not-a-leader", f"spawn of {self.mechanism!r} returned None")
        program = _Program(handle, session_id, folder)
        self._programs.append(program)
        try:
            ids = (os.getpgid(handle.pid), os.getsid(handle.pid))
        except ProcessLookupError:
            ids = None
        if ids is not None and ids != (handle.pid, handle.pid):
            raise _fail(
                "spawn-not-a-leader",
                f"the program {handle.pid} has process group {ids[0]} and session {ids[1]}, not its own",
            )
        return program

    def capture(self, program: _Program) -> GroupRef:
        """capture_program right after the spawn, and the GroupRef a record would make of it."""
        captured = self.call(
            "agent_tty_capture_program", mechanism=self.mechanism, pid=program.handle.pid, host_pid=os.getpid()
        )
        proof = captured.proof if captured is not None else None
        program.group = self.group(program.handle.pid, proof, program)
        release = getattr(program.handle, "release", None)
        if release is not None:
            release()  # as the host does once program.json names the program (StartGate)
        return program.group

    def group(self, pid: int, proof: dict[str, Any] | None, program: _Program) -> GroupRef:
        return GroupRef(self.mechanism, pid, proof, program.folder, self.host_identity, program.session_id)

    def reap(self, program: _Program, timeout: float) -> Any:
        """poll_exit until it reaps, then capture_reap at once and the GroupRef a record that
        carries it would make, as the host does."""
        ended = _wait_for(program.handle.poll_exit, timeout)
        if ended is not None and program.group is not None:
            reaped = self.call("agent_tty_capture_reap", mechanism=self.mechanism, pid=program.handle.pid)
            if reaped is not None:
                program.group = program.group.replace(reaped=reaped)
        return ended

    def close(self, program: _Program) -> None:
        """handle.close() once: a second close could close an fd number opened since."""
        if not program.closed:
            program.closed = True
            program.handle.close()

    def cleanup(self) -> None:
        """End what the kit started, each by its own pid or by a group it spawned; then let
        the plugin free what it made. Never raises: the check's own error is the one to see."""
        for program in self._programs:
            pid = program.handle.pid
            try:
                if program.handle.poll_exit() is None:  # unreaped: the pid, and so the group id, are ours
                    if os.getpgid(pid) == pid:
                        os.killpg(pid, signal.SIGKILL)
                    os.kill(pid, signal.SIGKILL)
            except Exception:  # noqa: BLE001, S110 - clean-up never raises: the check's own error is the one to see
                pass
        for process in self._strangers:
            process.kill()
            process.wait()
        self._end_marked()
        for pgid, beat, ends in self.chains:
            self._end_chain(pgid, beat, ends)
        for program in self._programs:
            try:
                self.reap(program, 2.0)
                self.close(program)
            except Exception:  # noqa: BLE001, S110 - clean-up never raises: the check's own error is the one to see
                pass
        for program in self._programs:
            if program.group is not None and self.implements("agent_tty_release_group"):
                try:
                    _wait_for(lambda group=program.group: self.call("agent_tty_release_group", group=group), 2.0, 0.05)
                except Exception:  # noqa: BLE001, S110 - clean-up never raises: the check's own error is the one to see
                    pass
        try:
            if self.implements("agent_tty_sweep"):
                self.call("agent_tty_sweep", home=str(self.home), session_ids=[])
        except Exception:  # noqa: BLE001, S110 - clean-up never raises: the check's own error is the one to see
            pass

    def _end_chain(self, pgid: int, beat: Path, ends: float) -> None:
        """A chain no scan showed: SIGKILL its group while its beat moves, well before it ends by
        itself. A moving beat is a live member, in the group (the chain never leaves it), so the
        id is still the group the kit spawned."""
        last = _read(beat)
        still_since = time.monotonic()
        while time.monotonic() - still_since < CHAIN_QUIET_S and time.monotonic() < ends:
            time.sleep(0.02)
            now = _read(beat)
            if now == last:
                continue
            last, still_since = now, time.monotonic()
            if time.monotonic() < ends - 1.0:
                try:
                    os.killpg(pgid, signal.SIGKILL)
                except OSError:
                    pass

    def _end_marked(self) -> None:
        """SIGKILL every live carrier of the kit's marker until three scans in a row show none.
        A carrier in the group of a program the kit spawned gets the kill by its group (a fork
        chain outruns kills by pid): the carrier, alive in it, holds the group's id."""
        spawned = {program.handle.pid for program in self._programs}
        empty = 0
        deadline = time.monotonic() + max(self.timeout, 5.0)
        while empty < 3 and time.monotonic() < deadline:
            found = _marked(self.marker)
            empty = 0 if found else empty + 1
            for proc in found:
                try:
                    if proc.pgid in spawned and proc.pgid > 1:
                        os.killpg(proc.pgid, signal.SIGKILL)
                    else:
                        os.kill(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.03)


# ---------------------------------------------------------------- one check per promise


def check_no_proof_no_signal(kit: _Kit) -> None:
    """[signals-without-proof] A group the plugin did not spawn, named with no proof while the
    session folder exists, is neither judged OWNED nor signalled (R15)."""
    stranger = kit.stranger("unproven")
    folder = kit.home / "sessions" / "kit-unproven"
    folder.mkdir(parents=True, exist_ok=True)
    group = GroupRef(kit.mechanism, stranger.pid, None, folder, kit.host_identity, "kit-unproven")
    _expect_untouched(kit, group, stranger, "with proof=None")


def check_forged_proof_no_signal(kit: _Kit) -> None:
    """[signals-without-proof] The proof the plugin captured for its own program A, in the
    record of another session that names the pid of an unrelated group B (a planted record),
    is neither judged OWNED nor signalled: B stays alive, running (R15). The same proof with
    only the pid swapped, in A's own session, may read OWNED (the proof names A's session,
    which runs; linux_cgroup judges by its leaf), but B still gets no signal."""
    program = kit.spawn((sys.executable, "-c", SLEEPER_SCRIPT, f"{kit.marker}-forged-a", "300"))
    own = kit.capture(program)
    stranger = kit.stranger("forged-b")
    planted = kit.home / "sessions" / "kit-planted"
    planted.mkdir(parents=True, exist_ok=True)
    forged = GroupRef(kit.mechanism, stranger.pid, own.proof, planted, kit.host_identity, "kit-planted")
    _expect_untouched(kit, forged, stranger, f"in another session's record with the proof of program {own.pid}")
    swapped = kit.group(stranger.pid, own.proof, program)
    _expect_untouched(
        kit, swapped, stranger, f"in program {own.pid}'s own record in place of its pid", owned_allowed=True
    )


def _expect_untouched(
    kit: _Kit, group: GroupRef, stranger: subprocess.Popen[bytes], how: str, owned_allowed: bool = False
) -> None:
    what = f"group {group.pid} (a process the kit started, never spawned by the plugin) named {how}"
    judged = kit.call("agent_tty_judge_group", group=group)
    if judged is GroupVerdict.OWNED and not owned_allowed:
        raise _fail("signals-without-proof", f"judge_group read OWNED for {what}")
    # Every signal the core sends, KILL last: a plugin must prove the group for each of them.
    for number in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        name = signal.Signals(number).name
        verdict = kit.call("agent_tty_kill_group", group=group, signal=number)
        if _wait_for(lambda: stranger.poll() is not None, SETTLE_S):
            raise _fail(
                "signals-without-proof",
                f"kill_group({name}) ended {what} (exit {stranger.returncode}); it returned {verdict!r}",
            )
        if verdict is GroupVerdict.OWNED and not owned_allowed:
            raise _fail("signals-without-proof", f"kill_group({name}) returned OWNED for {what}")
        state = _state(stranger.pid) or ""
        if state.startswith("T"):
            raise _fail("signals-without-proof", f"kill_group({name}) left {what} stopped (state {state})")


def check_judges_live_group(kit: _Kit) -> None:
    """[judges-live-group-gone] The plugin's own spawn (a shell with a sleeping child), with the
    proof its capture read, reads OWNED and alive while it runs; [kill-spares-own-group] then
    kill_group(SIGKILL) returns OWNED and the program ends."""
    script = '"$0" -c "$1" "$2" 300 & wait'
    program = kit.spawn(("/bin/sh", "-c", script, sys.executable, SLEEPER_SCRIPT, f"{kit.marker}-live"))
    group = kit.capture(program)
    # The shell's child starts in a moment; the group is owned from the spawn on either way.
    _wait_for(lambda: len(_marked(f"{kit.marker}-live")) >= 2, kit.timeout)
    verdict = kit.call("agent_tty_judge_group", group=group)
    if verdict is not GroupVerdict.OWNED:
        raise _fail("judges-live-group-gone", f"judge_group read {verdict!r} for its own running program {group.pid}")
    alive = kit.call("agent_tty_group_alive", group=group)
    if alive is not True:
        raise _fail("judges-live-group-gone", f"group_alive read {alive!r} for its own running program {group.pid}")
    killed = kit.call("agent_tty_kill_group", group=group, signal=signal.SIGKILL)
    if killed is not GroupVerdict.OWNED:
        raise _fail("kill-spares-own-group", f"kill_group(SIGKILL) returned {killed!r} for its own running program")
    if kit.reap(program, kit.timeout) is None:
        raise _fail("kill-spares-own-group", f"the program {group.pid} still runs {kit.timeout} s after kill_group")


def check_judges_hosts(kit: _Kit) -> None:
    """[judges-live-host-dead] capture_host + judge_host of a live process read ALIVE;
    [judges-dead-host-alive] once it is killed and reaped, or its identity names another live
    process's pid, not ALIVE; [kills-unproven-host] kill_host with that forged identity kills
    nothing (R2, R19)."""
    host = kit.stranger("host-a")
    other = kit.stranger("host-b")
    identity = kit.call("agent_tty_capture_host", mechanism=kit.mechanism, pid=host.pid)
    if not isinstance(identity, dict):
        raise _fail("judges-live-host-dead", f"capture_host returned {identity!r} for the live process {host.pid}")
    verdict = kit.call("agent_tty_judge_host", mechanism=kit.mechanism, pid=host.pid, identity=identity)
    if verdict is not HostVerdict.ALIVE:
        raise _fail("judges-live-host-dead", f"judge_host read {verdict!r} for the live process {host.pid}")
    forged = kit.call("agent_tty_judge_host", mechanism=kit.mechanism, pid=other.pid, identity=identity)
    if forged is HostVerdict.ALIVE:
        raise _fail("judges-dead-host-alive", f"judge_host read ALIVE for process {other.pid} with {host.pid}'s identity")
    killed = kit.call("agent_tty_kill_host", mechanism=kit.mechanism, pid=other.pid, identity=identity)
    if _wait_for(lambda: other.poll() is not None, SETTLE_S) or killed is HostVerdict.ALIVE:
        raise _fail(
            "kills-unproven-host",
            f"kill_host returned {killed!r} for process {other.pid} with {host.pid}'s identity "
            f"({'killed' if other.returncode is not None else 'still alive'})",
        )
    host.kill()
    host.wait()
    after = kit.call("agent_tty_judge_host", mechanism=kit.mechanism, pid=host.pid, identity=identity)
    if after is HostVerdict.ALIVE:
        raise _fail("judges-dead-host-alive", f"judge_host read ALIVE for {host.pid} after it was killed and reaped")


def check_kill_ends_fork_chain(kit: _Kit) -> None:
    """[fork-chain-survives-kill] The plugin's own program becomes a fork chain (its leader
    forks and exits at once, and is reaped as a host would); group_alive reads True while it
    runs ([judges-live-group-gone]); after kill_group(SIGKILL) no member is left within the
    timeout, and judge_group reads GONE ([judges-ended-group-live])."""
    marker = f"{kit.marker}-chain"
    beat = kit.home / f"beat-{uuid.uuid4().hex[:8]}"
    lifetime = kit.timeout + 30.0  # outlives every wait, so that only a kill ends it early
    ends = time.monotonic() + lifetime
    program = kit.spawn((sys.executable, "-c", CHAIN_SCRIPT, marker, str(beat), str(lifetime), str(CHAIN_STEP_S)))
    kit.chains.append((program.handle.pid, beat, ends))
    group = kit.capture(program)
    if not _wait_for(lambda: _beats(beat), kit.timeout):
        raise _fail("program-did-not-run", f"the kit's fork chain never ran under {kit.mechanism!r} (no beat in {beat})")
    kit.reap(program, kit.timeout)
    group = program.group or group
    alive = kit.call("agent_tty_group_alive", group=group)
    if alive is not True:
        raise _fail("judges-live-group-gone", f"group_alive read {alive!r} while its program's fork chain runs")
    verdict = kit.call("agent_tty_kill_group", group=group, signal=signal.SIGKILL)
    if verdict is GroupVerdict.AMBIGUOUS:
        # A plugin that cannot tell members forked after the reap from a group that took the
        # id (macos_ps, ADR 0026) may refuse the kill, if no wait then passes while they run:
        # destroy refuses and gc keeps the session, so nothing records the chain ended.
        alive = kit.call("agent_tty_group_alive", group=group)
        if alive is not True:
            raise _fail("judges-live-group-gone", f"group_alive read {alive!r} for the chain kill_group left ambiguous")
        return
    if not _wait_for(lambda: _chain_ended(marker, beat), kit.timeout, 0.0):
        seen = [p.pid for p in _marked(marker)]
        raise _fail(
            "fork-chain-survives-kill",
            f"kill_group(SIGKILL) returned {verdict!r}, but the fork chain of group {group.pid} still runs "
            f"{kit.timeout} s later (members seen: {seen or 'none in view'}, its beat file still changes)",
        )
    judged = _wait_for(lambda: kit.call("agent_tty_judge_group", group=group) is GroupVerdict.GONE, min(kit.timeout, 3.0), 0.05)
    if not judged:
        now = kit.call("agent_tty_judge_group", group=group)
        raise _fail("judges-ended-group-live", f"judge_group read {now!r} after the killed fork chain ended")


def check_unseen_fork_chain(kit: _Kit) -> None:
    """[alive-trusts-one-judgement] A fork chain that forks its successor at once (no listing
    of /proc shows a live member, UNSEEN_CHAIN_STEP_S) runs in the plugin's own group after its
    leader was reaped: group_alive reads True on every one of ten calls (a wait that passes on
    one scan that missed the chain lets destroy record it destroyed while it runs);
    [unseen-chain-survives-kill] kill_group(SIGKILL) then ends it: a group that can fork away
    from the kill is the plugin's to freeze inside the step (SIGSTOP or cgroup.freeze), or to
    kill atomically (cgroup.kill); or it reads AMBIGUOUS and alive, as in the chain check."""
    marker = f"{kit.marker}-unseen"
    beat = kit.home / f"beat-{uuid.uuid4().hex[:8]}"
    lifetime = kit.timeout + 30.0
    ends = time.monotonic() + lifetime
    program = kit.spawn(
        (sys.executable, "-c", CHAIN_SCRIPT, marker, str(beat), str(lifetime), str(UNSEEN_CHAIN_STEP_S))
    )
    kit.chains.append((program.handle.pid, beat, ends))
    group = kit.capture(program)
    if not _wait_for(lambda: _beats(beat), kit.timeout):
        raise _fail("program-did-not-run", f"the kit's fork chain never ran under {kit.mechanism!r} (no beat in {beat})")
    kit.reap(program, kit.timeout)
    group = program.group or group
    for attempt in range(10):
        alive = kit.call("agent_tty_group_alive", group=group)
        if alive is not True:
            raise _fail(
                "alive-trusts-one-judgement",
                f"group_alive read {alive!r} on call {attempt + 1} of 10 while its program's fork chain runs "
                "(it forks at once, so scans rarely show a member: freeze the group and look again)",
            )
    verdict = kit.call("agent_tty_kill_group", group=group, signal=signal.SIGKILL)
    if verdict is GroupVerdict.AMBIGUOUS:
        alive = kit.call("agent_tty_group_alive", group=group)
        if alive is not True:
            raise _fail("judges-live-group-gone", f"group_alive read {alive!r} for the chain kill_group left ambiguous")
        return
    if not _wait_for(lambda: _chain_ended(marker, beat), kit.timeout, 0.0):
        raise _fail(
            "unseen-chain-survives-kill",
            f"kill_group(SIGKILL) returned {verdict!r}, but the fork chain of group {group.pid}, which no scan "
            f"shows, still runs {kit.timeout} s later (its beat file still changes): freeze the group inside "
            "kill_group (SIGSTOP, cgroup.freeze), judge what is stopped, kill, thaw",
        )


def check_runs_inside_the_program(kit: _Kit) -> str | None:
    """[runs-inside-says-outside] runs_inside, asked in the program the plugin spawned and in a
    job of its session in a process group of its own, reads True (a destroy that the program
    runs must re-run detached, or it dies in its own kill). The plugin is loaded again in the
    program: by its module's name, unpickled, or by calling its class without arguments; a
    plugin none of these loads skips the check (the reason is in the report)."""
    if not kit.implements("agent_tty_runs_inside"):
        return None  # the core reads no answer as inside
    if not kit.inside_program:
        return "the caller said the plugin does not load in a program of its own (inside_program=False)"
    import pickle
    import types

    plugin = kit.plugin
    if isinstance(plugin, types.ModuleType):
        spec: dict[str, Any] = {"module": plugin.__name__}
    else:
        try:
            pickled: bytes | None = pickle.dumps(plugin)
        except Exception:  # noqa: BLE001 - a plugin object pickle cannot take is rebuilt from its class
            pickled = None
        spec = {"pickle": pickled, "class": f"{type(plugin).__module__}:{type(plugin).__qualname__}"}
    spec.update(mechanism=kit.mechanism, identity=kit.host_identity, program_pid=None)
    spec_path = kit.home / f"inside-{uuid.uuid4().hex[:8]}.pickle"
    result_path = kit.home / f"inside-{uuid.uuid4().hex[:8]}.json"
    spec_path.write_bytes(pickle.dumps(spec))
    program = kit.spawn(
        (sys.executable, "-c", INSIDE_SCRIPT, f"{kit.marker}-inside", str(spec_path), str(result_path)),
        env={"PYTHONPATH": os.pathsep.join(path for path in sys.path if path)},
    )
    kit.capture(program)
    if not _wait_for(result_path.exists, kit.timeout + 10.0, 0.05):
        raise _fail("runs-inside-says-outside", f"the program that asks runs_inside wrote no answer in {kit.timeout + 10.0} s")
    kit.reap(program, kit.timeout)
    import json

    result = json.loads(result_path.read_text())
    for where, what in (("leader", "the program itself"), ("job", "a job of the program's session in a group of its own")):
        got = result.get(where) or {}
        if "load" in got:
            return f"the plugin does not load again in a program of its own: {got['load']}"
        if "raised" in got:
            raise _fail("runs-inside-says-outside", f"runs_inside raised in {what}: {got['raised']}")
        if got.get("answer") is not True:
            raise _fail("runs-inside-says-outside", f"runs_inside read {got.get('answer')!r} in {what}")
    return None


def _beats(beat: Path) -> bool:
    first = _read(beat)
    time.sleep(0.05)
    return first is not None and _read(beat) != first


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _chain_ended(marker: str, beat: Path) -> bool:
    """No carrier of the marker in any scan for CHAIN_QUIET_S, and the beat file unchanged all
    along (a chain whose members each live a few ms is often missed by a scan, never by the beat;
    a busy machine can hold a live chain off the CPU for a few hundred ms)."""
    first = _read(beat)
    deadline = time.monotonic() + CHAIN_QUIET_S
    while time.monotonic() < deadline:
        if _marked(marker) or _read(beat) != first:
            return False
        time.sleep(0.05)
    return _read(beat) == first


def check_frees_what_it_made(kit: _Kit) -> None:
    """[leaks-zombie] after kill_group the program is reaped by poll_exit; [leaks-fd] once the
    handle is closed the kit holds as many fds as before the spawn; [release-fails]
    release_group returns True; [sweep-not-a-list] sweep(home, []) returns a list."""
    before = _fds()
    count = _fd_count()
    program = kit.spawn((sys.executable, "-c", SLEEPER_SCRIPT, f"{kit.marker}-leak", "300"))
    group = kit.capture(program)
    kit.call("agent_tty_kill_group", group=group, signal=signal.SIGKILL)
    if kit.reap(program, kit.timeout) is None:
        raise _fail("leaks-zombie", f"poll_exit gave no exit {kit.timeout} s after kill_group of {group.pid}")
    try:
        os.waitpid(program.handle.pid, os.WNOHANG)
    except ChildProcessError:
        pass  # reaped: no longer the kit's child
    else:
        raise _fail("leaks-zombie", f"poll_exit reported an exit, but {group.pid} was still the kit's unreaped child")
    kit.close(program)
    if _fd_count() != count:
        extra = sorted(set(_fds()) - set(before))
        raise _fail("leaks-fd", f"the kit held {count} fds before the spawn and {_fd_count()} after close(): {extra}")
    # A hook the plugin does not implement holds nothing to free.
    if kit.implements("agent_tty_release_group"):
        released = _wait_for(lambda: kit.call("agent_tty_release_group", group=group), kit.timeout, 0.05)
        if released is not True:
            raise _fail("release-fails", f"release_group returned {released!r} {kit.timeout} s after the group ended")
    if kit.implements("agent_tty_sweep"):
        swept = kit.call("agent_tty_sweep", home=str(kit.home), session_ids=[])
        if not isinstance(swept, list):
            raise _fail("sweep-not-a-list", f"sweep returned {swept!r}")


ALWAYS = (check_no_proof_no_signal,)
"""Safe to ask of any plugin, even one whose probe says it cannot work here."""
WHEN_USABLE = (
    check_forged_proof_no_signal,
    check_judges_live_group,
    check_judges_hosts,
    check_unseen_fork_chain,
    check_kill_ends_fork_chain,
    check_runs_inside_the_program,
    check_frees_what_it_made,
)


@contextmanager
def _workdir(given: Path | str | None) -> Iterator[Path]:
    if given is not None:
        path = Path(given) / f"kit-{uuid.uuid4().hex[:8]}"
        path.mkdir(parents=True)
        yield path
        return
    path = Path(tempfile.mkdtemp(prefix="agent-tty-kit-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def check_plugin_behaviour(
    plugin: Any,
    mechanism: str,
    *,
    workdir: Path | str | None = None,
    timeout: float = 10.0,
    inside_program: bool = True,
) -> BehaviourReport:
    """Run every behavioural check against `plugin` (a module or object with agent_tty_* hooks)
    registered as `mechanism`; raise AssertionError "[tag] ..." at the first broken promise.

    First the shape check (agent_tty.platform.contract.check_plugin). When the probe says the
    plugin cannot work here, only the checks that need no spawn run; the others are listed in
    `skipped` with the probe's reason. `workdir` holds the kit's Home and session folders (a
    temporary folder, removed at the end, when None); `timeout` bounds each wait.
    `inside_program=False` skips check_runs_inside_the_program, which loads the plugin again in
    a program the kit spawned: for a plugin that works only with test doubles installed in this
    process (the report's `skipped` says so).
    """
    from agent_tty.platform.contract import check_plugin

    probe_hook = getattr(plugin, "agent_tty_probe", None)
    if probe_hook is not None:
        try:
            probe_hook()
        except Exception as err:
            raise _fail("probe-raises", f"agent_tty_probe raised {type(err).__name__}: {err}") from err
    try:
        probe = check_plugin(plugin, mechanism)
    except AssertionError as err:
        raise _fail("shape", str(err)) from None
    report = BehaviourReport(mechanism, probe)
    with _workdir(workdir) as root:
        kit = _Kit(plugin, mechanism, root, timeout)
        kit.inside_program = inside_program
        try:
            kit.host_identity = kit.call("agent_tty_capture_host", mechanism=mechanism, pid=os.getpid())
            for check in ALWAYS:
                check(kit)
                report.passed.append(check.__name__)
            for check in WHEN_USABLE:
                if not probe.usable:
                    report.skipped[check.__name__] = f"the probe says {mechanism!r} cannot work here: {probe.reason}"
                    continue
                skipped = check(kit)
                if isinstance(skipped, str):
                    report.skipped[check.__name__] = skipped
                else:
                    report.passed.append(check.__name__)
        finally:
            kit.cleanup()
    return report
