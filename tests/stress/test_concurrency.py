"""Many CLI processes at once on one Home, with host SIGKILLs, checked after every step.

    AGENT_TTY_STRESS_SECONDS=600 .venv/bin/python -m pytest tests/stress -s   # longer on demand

Workers run create, list, inspect, destroy, destroy --force, gc and gc --dry-run as real CLI
processes, SIGKILL random hosts, and SIGKILL some of their own CLI processes mid-command. After every step an invariant checker reads the Home and
the process table and records any broken rule:
- R1: a session folder is gone while its host still runs (for more than a second);
- R3: a session that read terminal reads active again;
- R10: a removed session folder comes back;
- R11/R16: a session reads destroyed while a process of its program still runs;
- R20: a session folder (with a program.json that held a token) is removed while a process of
  its program still runs;
- R15/R19: a canary process (not any session's) received a signal;
- the contract: an exit code outside CLI-CONTRACT.md's, INTERNAL_ERROR, or a traceback;
- a host that crashed (its host.log has a reason in it).

The run cycles through phases of PHASE_S seconds each: normal; a slow disk (the replay tool
holds manifest writes, renames and removals in hosts and commands); a full disk (root only:
the Home is a tmpfs that a filler file fills, then frees at the phase's end).
"""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli, pid_alive

pytestmark = pytest.mark.integration

SECONDS = float(os.environ.get("AGENT_TTY_STRESS_SECONDS", "25"))
WORKERS = 5
MAX_ACTIVE = 10
ALLOWED_EXITS = {0, 2, 3, 4, 5, 6, 8}
PROGRAMS = [
    ("sh", "-c", 'trap "" HUP; sleep 300 & wait'),
    ("sleep", "300"),
    ("sh", "-c", "sleep 0.4"),
    ("true",),
    ("sh", "-c", 'trap "" HUP; sleep 300 & exit 0'),
]
TERMINAL = {"exited", "failed", "destroyed"}
PHASE_S = 4.0
PHASES = ("normal", "slow", "full")
HOME_SIZE = "64m"
SLOW_HOLDS = ",".join(
    f"{process}:{op}:{suffix}:{nth}:{ms}"
    for process, op, suffix, nth, ms in [
        ("host", "rename", "/session.json", 2, 300),
        ("host", "write", "/events.jsonl", 1, 200),
        ("create", "rename", "/session.json", 1, 200),
        ("destroy", "rename", "/session.json", 1, 250),
        ("destroy", "write", "/destroyed", 1, 150),
        ("gc", "rmtree", "", 1, 250),
        ("inspect", "rename", "/session.json", 1, 150),
        ("list", "read", "/session.json", 2, 100),
    ]
)
"""The slow-disk phase: one held call of each kind in each process (the replay tool)."""


def phase(started: float) -> str:
    return PHASES[int((time.monotonic() - started) / PHASE_S) % len(PHASES)]


class Filler:
    """Fills the tmpfs Home during the full-disk phase and frees it after."""

    def __init__(self, home: Path, enabled: bool) -> None:
        self.path = home / "filler"
        self.enabled = enabled
        self.full = False
        self.phases = 0

    def set(self, full: bool) -> None:
        if not self.enabled or full == self.full:
            return
        if full:
            self.phases += 1
            with open(self.path, "wb", buffering=0) as handle:
                for size in (1 << 20, 1 << 16, 4096):
                    try:
                        while True:
                            handle.write(b"\0" * size)
                    except OSError as err:
                        assert err.errno == errno.ENOSPC, err
        else:
            self.path.unlink(missing_ok=True)
        self.full = full


class Canary:
    """A process that is no session's; it counts every signal it receives."""

    def __init__(self, folder: Path, index: int) -> None:
        self.log = folder / f"canary-{index}.log"
        code = (
            "import signal, sys, time\n"
            f"log = open({str(self.log)!r}, 'a', buffering=1)\n"
            "for s in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT, signal.SIGCONT, signal.SIGUSR1):\n"
            "    signal.signal(s, lambda n, f: log.write(f'signal {n}\\n'))\n"
            "while True: time.sleep(1)\n"
        )
        self.process = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)

    def hits(self) -> list[str]:
        alive = self.process.poll() is None
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return lines + ([] if alive else [f"ended with {self.process.returncode}"])

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


class Checker:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.sessions = home / "sessions"
        self.lock = threading.Lock()
        self.serial = threading.Lock()
        self.violations: list[str] = []
        self.last_status: dict[str, str] = {}
        self.seen: set[str] = set()
        self.removed: set[str] = set()
        self.orphaned_hosts: dict[int, float] = {}
        self.tokened: set[str] = set()
        self.crashed: set[str] = set()

    def violation(self, text: str) -> None:
        with self.lock:
            self.violations.append(text)

    def evidence(self, sid: str, pids: list[int]) -> str:
        """What a CI log needs to explain a violation: the session's records (its Home is a
        tmpfs that is gone after the test) and each process's group and cgroup."""
        lines = []
        for name in ("session.json", "program.json", "host.json", "destroyed", "host.log"):
            try:
                lines.append(f"  {name}: {(self.sessions / sid / name).read_text(errors='replace')[-1500:]}")
            except OSError as err:
                lines.append(f"  {name}: {err.strerror}")
        try:
            events = (self.sessions / sid / "events.jsonl").read_text(errors="replace").splitlines()
            lines.append("  events.jsonl (last 12):\n" + "\n".join(f"    {line[:300]}" for line in events[-12:]))
        except OSError as err:
            lines.append(f"  events.jsonl: {err.strerror}")
        for pid in pids:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
                fields = stat[stat.rindex(")") + 2 :].split()
                cgroup = Path(f"/proc/{pid}/cgroup").read_text().strip()
                lines.append(f"  pid {pid}: ppid={fields[1]} pgid={fields[2]} sid={fields[3]} cgroup={cgroup}")
            except (OSError, ValueError) as err:
                lines.append(f"  pid {pid}: {err}")
        return "\n".join(lines)

    def _hosts(self) -> dict[str, int]:
        hosts = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"agent_tty.host" in argv and str(self.home).encode() in argv and pid_alive(int(name)):
                hosts[argv[argv.index(b"agent_tty.host") + 1].decode()] = int(name)
        return hosts

    def _program_processes(self) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                env = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            for item in env:
                if item.startswith(b"AGENT_TTY_SESSION_ID="):
                    if pid_alive(int(name)):
                        found.setdefault(item.split(b"=", 1)[1].decode(), []).append(int(name))
        return found

    def check(self) -> None:
        # One check at a time: two workers' views taken in one order and applied in the other
        # would read as a folder that came back.
        with self.serial:
            self._check()

    def _check(self) -> None:
        statuses: dict[str, str] = {}
        present = set(os.listdir(self.sessions)) if self.sessions.is_dir() else set()
        for sid in present:
            try:
                crash = (self.sessions / sid / "host.log").read_text(errors="replace")
            except OSError:
                crash = ""
            if crash and sid not in self.crashed:
                self.crashed.add(sid)
                self.violation(f"host crash: {sid}: {crash[-500:]}")
            try:
                statuses[sid] = json.loads((self.sessions / sid / "session.json").read_text())["status"]
                if sid not in self.tokened:
                    proof = json.loads((self.sessions / sid / "program.json").read_text()).get("proof") or {}
                    if proof.get("autogroup") is not None:
                        with self.lock:
                            self.tokened.add(sid)
            except (OSError, ValueError, KeyError, AttributeError):
                continue  # being created or removed right now
        programs = self._program_processes()
        hosts = self._hosts()
        now = time.monotonic()
        with self.lock:
            for sid in present:
                if sid in self.removed:
                    self.violations.append(f"R10: folder of {sid} came back after it was removed")
            for sid in self.seen - present:
                self.removed.add(sid)
            self.seen |= present
            for sid, status in statuses.items():
                before = self.last_status.get(sid)
                if before in TERMINAL and status not in TERMINAL:
                    self.violations.append(f"R3: {sid} went {before} -> {status}")
                self.last_status[sid] = status
        for sid, status in statuses.items():
            if status == "destroyed" and programs.get(sid):
                # Read the status again: only a destroyed that holds while a member runs counts.
                time.sleep(0.05)
                still = [p for p in programs[sid] if pid_alive(p)]
                try:
                    again = json.loads((self.sessions / sid / "session.json").read_text())["status"]
                except (OSError, ValueError, KeyError):
                    again = None
                if again == "destroyed" and still:
                    self.violation(f"R11/R16: {sid} reads destroyed while {still} run\n{self.evidence(sid, still)}")
        for sid in self.removed & self.tokened:
            running = [p for p in programs.get(sid, []) if pid_alive(p)]
            if running:
                time.sleep(0.05)
                running = [p for p in running if pid_alive(p)]
                if running:
                    self.violation(f"R20: folder of {sid} removed while {running} of its program run\n{self.evidence(sid, running)}")
        for sid, pid in hosts.items():
            if sid in self.removed or (sid not in present and sid in self.seen):
                first = self.orphaned_hosts.setdefault(pid, now)
                if now - first > 1.0 and pid_alive(pid):
                    self.violation(f"R1: folder of {sid} removed while its host {pid} runs")


def _sigkill_host(home: Path, sessions: Path) -> bool:
    """SIGKILL one of this Home's hosts, through a pidfd so a reused pid cannot be hit."""
    names = list(os.listdir(sessions)) if sessions.is_dir() else []
    random.shuffle(names)
    for sid in names:
        try:
            pid = json.loads((sessions / sid / "session.json").read_text()).get("hostPid")
        except (OSError, ValueError):
            continue
        if not pid or not (sessions / sid / "program.json").exists():
            continue  # a host killed before program.json leaves a program no file names (R16 exempts it)
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"agent_tty.host" in argv and sid.encode() in argv and str(home).encode() in argv:
                signal.pidfd_send_signal(fd, signal.SIGKILL)
                return True
        except OSError:
            pass
        finally:
            os.close(fd)
    return False


@pytest.fixture
def stress_home(tmp_path: Path) -> Iterator[str | None]:
    """As root, tmp_path/home (the cli fixture's Home) on a tmpfs the full-disk phase can fill;
    requested before `cli`, so it is unmounted after cli's teardown. Yields why not, or None."""
    if os.geteuid() != 0:
        yield "no full-disk phase: mounting a tmpfs Home needs root"
        return
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={HOME_SIZE},mode=0700", "tmpfs", str(home)], capture_output=True, text=True)
    if done.returncode != 0:
        yield f"no full-disk phase: {done.stderr.strip()}"
        return
    try:
        yield None
    finally:
        subprocess.run(["umount", "-l", str(home)], check=False)


@pytest.mark.timeout(SECONDS + 180)
def test_concurrent_commands_break_no_rule(stress_home: str | None, cli: Cli, tmp_path: Path) -> None:
    checker = Checker(cli.home)
    filler = Filler(cli.home, enabled=stress_home is None)
    started = time.monotonic()
    holds = cli.replay_env(SLOW_HOLDS, tmp_path / "replay.log")
    canaries = [Canary(tmp_path, i) for i in range(2)]
    counts: Counter[str] = Counter()
    created: list[str] = []
    deadline = time.monotonic() + SECONDS
    rng = random.Random(int(os.environ.get("AGENT_TTY_STRESS_SEED", "7")))

    def known() -> list[str]:
        return list(os.listdir(cli.home / "sessions")) if (cli.home / "sessions").is_dir() else []

    def step(worker_rng: random.Random) -> None:
        op = worker_rng.choices(
            ["create", "list", "list-all", "inspect", "destroy", "destroy-force", "gc", "gc-dry", "kill-host", "interrupt"],
            weights=[4, 2, 1, 2, 2, 2, 2, 1, 1, 2],
        )[0]
        ids = known()
        active = sum(1 for s, st in checker.last_status.items() if st not in TERMINAL and s in ids)
        if op == "create" and active >= MAX_ACTIVE:
            op = "destroy-force"
        if op == "kill-host":
            if _sigkill_host(cli.home, cli.home / "sessions"):
                counts[op] += 1
            return
        if op == "interrupt":
            # A command that dies mid-way (an agent killed, a CI step cancelled): the next
            # commands must still find every rule kept.
            target = worker_rng.choice(known() or ["none"])
            victim = worker_rng.choice(
                [["list"], ["gc"], ["destroy", target], ["destroy", "--force", target], ["inspect", target]]
            )
            process = cli.start(*victim)
            time.sleep(worker_rng.uniform(0.0, 0.25))
            process.kill()  # our own child, by its handle
            process.communicate()
            counts[op] += 1
            return
        target = worker_rng.choice(ids) if ids else None
        args = {
            "create": ["create", "--", *worker_rng.choice(PROGRAMS)],
            "list": ["list"],
            "list-all": ["list", "--all"],
            "inspect": ["inspect", target or "none"],
            "destroy": ["destroy", target or "none"],
            "destroy-force": ["destroy", "--force", target or "none"],
            "gc": ["gc"],
            "gc-dry": ["gc", "--dry-run"],
        }[op]
        now = phase(started)
        done = cli.run(*args, timeout=60, env=holds if now == "slow" else None)
        counts[op] += 1
        counts[f"during-{now}"] += 1
        if done.code not in ALLOWED_EXITS:
            checker.violation(f"contract: {' '.join(args)} exited {done.code}: {done.stdout} {done.stderr}")
        elif done.code != 0 and json.loads(done.stdout)["error"]["code"] == "INTERNAL_ERROR":
            checker.violation(f"contract: {' '.join(args)}: {done.stdout}")
        if op == "create" and done.code == 0:
            created.append(done.result["sessionId"])

    def worker(seed: int) -> None:
        worker_rng = random.Random(seed)
        while time.monotonic() < deadline:
            try:
                step(worker_rng)
                checker.check()
            except Exception as err:  # a crash of the harness is a failure too
                checker.violation(f"harness: {type(err).__name__}: {err}")
                return

    def disk() -> None:
        while time.monotonic() < deadline:
            filler.set(phase(started) == "full")
            time.sleep(0.05)
        filler.set(False)

    threads = [threading.Thread(target=worker, args=(rng.randrange(1 << 30),)) for _ in range(WORKERS)]
    threads.append(threading.Thread(target=disk))
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        checker.check()
        for canary in canaries:
            for hit in canary.hits():
                checker.violation(f"R15/R19: canary {canary.process.pid}: {hit}")
    finally:
        filler.set(False)
        for canary in canaries:
            canary.stop()
    holds_seen = (tmp_path / "replay.log").read_text().count("hold ") if (tmp_path / "replay.log").exists() else 0
    print(
        f"\nstress: {SECONDS:g} s, {WORKERS} workers, operations {dict(sorted(counts.items()))}, "
        f"sessions created {len(created)}, slow-disk holds {holds_seen}, full-disk phases {filler.phases}"
        f"{' (' + stress_home + ')' if stress_home else ''}, violations {len(checker.violations)}"
    )
    assert checker.violations == [], "\n".join(checker.violations[:20])
