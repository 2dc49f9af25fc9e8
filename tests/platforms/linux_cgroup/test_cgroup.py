"""linux_cgroup: placement before exec (born in the leaf, or moved in), atomic kill of a fork chain,
leaves freed, others spared."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Cli, default_mechanism, pid_alive, wait_until

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
cgroup = pytest.mark.skipif(default_mechanism() != "linux_cgroup", reason="this user cannot make cgroup leaves here")


def test_contract() -> None:
    import agent_tty_plugins.linux_cgroup as plugin
    from agent_tty.platform.contract import check_plugin

    check_plugin(plugin, "linux_cgroup")


@pytest.mark.skipif(default_mechanism() == "linux_cgroup", reason="cgroup leaves work for this user")
def test_doctor_says_why_cgroup_was_not_chosen(cli: Cli) -> None:
    report = cli.run("doctor").result
    entry = next(p for p in report["plugins"] if p["name"] == "linux_cgroup")
    assert entry["usable"] is False and entry["notChosenBecause"] == entry["reason"] and entry["reason"]
    assert report["mechanism"] == "linux_autogroup"
    done = cli.run("create", "--", "true", env={"AGENT_TTY_MECHANISM": "linux_cgroup"})
    assert done.code == 1 and "linux_cgroup" in done.error["message"] and entry["reason"] in done.error["message"]


def _leaf_of(pid: int) -> str:
    return next(line[3:] for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines() if line.startswith("0::"))


@cgroup
def test_program_starts_in_its_leaf_and_the_leaf_goes_with_it(cli: Cli) -> None:
    from agent_tty_plugins.linux_cgroup import cgroup2_mount

    created = cli.create("sh", "-c", 'trap "" HUP; sleep 300 & wait')
    sid = created["sessionId"]
    assert created["mechanism"] == "linux_cgroup"
    proof = cli.program(sid)["proof"]
    leaf = proof["cgroup"]["path"]
    assert leaf.endswith("/" + sid) and _leaf_of(created["childPid"]) == leaf
    assert _leaf_of(created["hostPid"]) != leaf, "the host stays outside the leaf"
    assert (cgroup2_mount() / leaf.lstrip("/")).stat().st_ino == proof["cgroup"]["id"]
    assert proof["autogroup"] is not None, "the autogroup token is kept for a CLI without the leaf"
    assert cli.run("destroy", sid).result["status"] == "destroyed"
    assert not (cgroup2_mount() / leaf.lstrip("/")).exists()


# How the program gets into its leaf (ADR 0045): born there (clone3 with CLONE_INTO_CGROUP), or,
# with the plugin's switch AGENT_TTY_CGROUP_CLONE3=0 (the path of a kernel before 5.7, a seccomp
# filter that refuses clone3, a host with threads), forked beside the host and moved in by itself.
WAYS = [pytest.param({}, id="born-in-leaf"), pytest.param({"AGENT_TTY_CGROUP_CLONE3": "0"}, id="moved-in")]


@cgroup
@pytest.mark.parametrize("env", WAYS)
def test_the_program_is_in_its_leaf_at_its_first_instruction(cli: Cli, env: dict[str, str]) -> None:
    """ProgramStartsInLeaf: what the program reads of itself first, before anything it could
    start, names its own leaf: the leaf program.json proves, made for this Home and session."""
    from agent_tty_plugins.linux_cgroup import leaf_for, probe

    done = cli.run("create", "--", "cat", "/proc/self/cgroup", env=env)
    assert done.code == 0, done.stdout
    sid = done.result["sessionId"]
    assert cli.run("wait", sid, "--exit", "--timeout", "10s").result["matched"] is True
    lines = [line.strip() for line in cli.run("snapshot", sid).result["lines"]]
    first = next(line for line in lines if line.startswith("0::"))
    placement = probe()[1]
    leaf = "/" + str(leaf_for(placement, str(cli.home), sid).relative_to(placement.mount))
    assert first == f"0::{leaf}", lines
    assert cli.program(sid)["proof"]["cgroup"]["path"] == leaf


def _can_trace() -> bool:
    strace = shutil.which("strace")
    return strace is not None and subprocess.run([strace, "-o", os.devnull, "true"], capture_output=True).returncode == 0


@cgroup
@pytest.mark.skipif(not _can_trace(), reason="strace is missing or this user may not trace its children")
@pytest.mark.parametrize("env", WAYS)
def test_the_program_is_born_in_its_leaf_without_a_migration(cli: Cli, tmp_path: Path, env: dict[str, str]) -> None:
    """Where the kernel allows it, create migrates no process: the program (and each probe's
    child) is born in its leaf by clone3, and nothing writes a cgroup.procs. With the switch,
    the program moves itself in as before (the write is there, and no clone3 into a cgroup)."""
    trace, out = tmp_path / "trace", tmp_path / "create.json"
    # -ff: a file per process, so that no call is split across lines by another's
    argv = [shutil.which("strace") or "strace", "-ff", "-qq", "-e", "signal=none", "-e", "trace=clone3,openat", "-o", str(trace)]
    with out.open("w") as stdout:
        tracer = subprocess.Popen([*argv, *cli.command, "--json", "create", "--", "true"], stdout=stdout, env=cli.env(env))
        try:
            # strace follows the detached host too, and ends with it: once `true` ended.
            tracer.wait(timeout=60)
        finally:
            if tracer.poll() is None:
                tracer.kill()
                tracer.wait()
    created = json.loads(out.read_text())["result"]
    text = "".join(path.read_text() for path in sorted(tmp_path.glob("trace.*")))
    births = re.findall(r"clone3\(\{flags=CLONE_INTO_CGROUP\b.*\) = (\d+)", text)
    moves = [line for line in text.splitlines() if re.search(r'openat\(.*/cgroup\.procs", O_WRONLY', line)]
    leaf_moves = [line for line in moves if f"/{created['sessionId']}/cgroup.procs" in line]
    if env:
        assert births == [] and len(leaf_moves) == 1, text
    else:
        assert moves == [], moves
        # the create's probe, the host's probe, the program (which is the session's childPid)
        assert len(births) == 3 and created["childPid"] in map(int, births), (births, created)


@cgroup
def test_destroy_ends_a_fork_chain(cli: Cli, tmp_path: Path) -> None:
    for attempt in range(5):
        beat = tmp_path / f"beat-{attempt}"
        # The chain ignores the hang-up of its shell's exit, as a real leftover would.
        sid = cli.create("sh", "-c", f'trap "" HUP; {sys.executable} {FIXTURES / "fork_chain.py"} {beat} 60 & wait')["sessionId"]
        wait_until(beat.exists, what="the chain to start")
        done = cli.run("destroy", sid, *(["--force"] if attempt % 2 else []))
        assert done.code == 0, done.stdout
        first = beat.read_text()
        time.sleep(0.3)
        assert beat.read_text() == first, "the chain survived destroy"


@cgroup
@pytest.mark.parametrize("force", [False, True], ids=["destroy", "destroy-force"])
def test_without_cgroup_kill_destroy_freezes_then_kills_a_fork_chain(cli: Cli, tmp_path: Path, force: bool) -> None:
    """A kernel without cgroup.kill (before 5.14): the kill step freezes the leaf
    (cgroup.freeze), SIGKILLs every listed member and thaws, so no member of a fork chain can
    fork away meanwhile. The replay tool hides cgroup.kill from the host and the destroy."""
    log = tmp_path / "replay.log"
    # Hide cgroup.kill; log (a hold of 0 ms) each process's first two writes of cgroup.freeze.
    hide = ",".join(
        f"{who}:{op}:{suffix}:{nth}:0"
        for who in ("host", "destroy")
        for op, suffix, nth in (("hide", "/cgroup.kill", 1), ("write", "/cgroup.freeze", 1), ("write", "/cgroup.freeze", 2))
    )
    env = cli.replay_env(hide, log)
    beat = tmp_path / "beat"
    created = cli.run(
        "create", "--", "sh", "-c", f'trap "" HUP; {sys.executable} {FIXTURES / "fork_chain.py"} {beat} 60 & wait', env=env
    )
    assert created.code == 0, created.stdout
    sid = created.result["sessionId"]
    wait_until(beat.exists, what="the chain to start")
    done = cli.run("destroy", sid, *(["--force"] if force else []), env=env)
    assert done.code == 0 and done.result["status"] == "destroyed", done.stdout
    first = beat.read_text()
    time.sleep(0.3)
    assert beat.read_text() == first, "the chain survived destroy"
    who = "destroy" if force else "host"
    lines = log.read_text().splitlines()
    assert any(line.startswith(f"hide {who} ") for line in lines), "the kill never looked for cgroup.kill"
    freezes = [line for line in lines if line.startswith(f"hold {who} write ") and "/cgroup.freeze" in line]
    assert len(freezes) == 2, f"expected a freeze and a thaw around the kill: {lines}"


@cgroup
def test_sessions_of_the_autogroup_mechanism_keep_it(cli: Cli) -> None:
    """A session whose program.json names linux_autogroup (an older session) stays with it."""
    old = cli.create("sh", "-c", 'trap "" HUP; exec sleep 300', options=())
    cli.pin = "linux_autogroup"
    legacy = cli.create("sh", "-c", 'trap "" HUP; exec sleep 300')
    cli.pin = None
    assert old["mechanism"] == "linux_cgroup" and legacy["mechanism"] == "linux_autogroup"
    assert "cgroup" not in cli.program(legacy["sessionId"])["proof"]
    assert cli.run("destroy", legacy["sessionId"], "--force").result["status"] == "destroyed"
    assert not pid_alive(legacy["childPid"])
    assert cli.run("destroy", old["sessionId"]).result["status"] == "destroyed"


@cgroup
def test_no_kill_reaches_outside_the_leaf(cli: Cli, tmp_path: Path) -> None:
    from agent_tty_plugins.linux_cgroup import cgroup2_mount

    other_leaf = cgroup2_mount() / f"agent-tty-test-canary-{os.getpid()}"
    other_leaf.mkdir()
    inside_other = subprocess.Popen(
        [sys.executable, "-c", f"open({str(other_leaf / 'cgroup.procs')!r}, 'w').write('0'); import time; time.sleep(60)"],
        start_new_session=True,
    )
    outside = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        wait_until(lambda: _leaf_of(inside_other.pid).endswith(other_leaf.name), what="canary in its leaf")
        for force in (False, True):
            sid = cli.create("sh", "-c", 'trap "" HUP; sleep 300 & wait')["sessionId"]
            assert cli.run("destroy", sid, *(["--force"] if force else [])).code == 0
        assert inside_other.poll() is None and outside.poll() is None
    finally:
        for process in (inside_other, outside):
            process.kill()
            process.wait()
        wait_until(lambda: _rmdir(other_leaf), what="canary leaf removed")


def _rmdir(path: Path) -> bool:
    try:
        path.rmdir()
        return True
    except OSError:
        return False


@cgroup
def test_gc_frees_a_leaf_a_crash_left(cli: Cli) -> None:
    from agent_tty_plugins.linux_cgroup import probe, leaf_for

    created = cli.create("true")
    wait_until(lambda: cli.manifest(created["sessionId"])["status"] == "exited", what="exit")
    placement = probe()[1]
    stray = leaf_for(placement, str(cli.home), "strayleaf0001")
    stray.mkdir(parents=True)
    report = cli.run("gc").result
    assert created["sessionId"] in report["removedSessions"]
    assert not stray.exists()
    assert json.loads(json.dumps(report))["skippedSessions"] == []
