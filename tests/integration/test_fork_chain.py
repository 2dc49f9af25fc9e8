"""A fork chain that no /proc scan shows: destroy ends it and gc keeps its record meanwhile,
on both Linux mechanisms (FreezesUnseenGroup, GcProbesUnseenGroup, GcFreezesUnseenGroup). Pinned
to macos_ps, whose proof cannot date a member forked after the leader's reap, gc keeps it and
destroy refuses instead (ADR 0026)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli, beats, default_mechanism, wait_until

pytestmark = pytest.mark.integration
CHAIN = Path(__file__).resolve().parent.parent / "fixtures" / "fork_chain.py"
MECHANISMS = sorted({"linux_autogroup", default_mechanism()})


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_gc_keeps_and_destroy_ends_a_fork_chain(cli: Cli, tmp_path: Path, mechanism: str) -> None:
    cli.pin = mechanism
    beat = tmp_path / "beat"
    sid = cli.create("sh", "-c", f'trap "" HUP; {sys.executable} {CHAIN} {beat} 30 & exit 0')["sessionId"]
    wait_until(beat.exists, what="the chain to start")
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="the shell to exit")
    assert beats(beat, 10.0)
    report = cli.run("gc").result
    assert report["removedSessions"] == [], "gc removed the record of a chain that still runs (R20)"
    if mechanism == "macos_ps":
        # ADR 0026: each member started after the host reaped the shell, so nothing tells the
        # chain from a session that took the id: gc says so, destroy refuses, nothing is signalled.
        # A scan that sees a member reads it ambiguous; one that sees none reads the group
        # alive through the frozen judgement (the reason then cannot tell which).
        assert report["skippedSessions"][0]["reason"].startswith(
            ("processes run in the program's process group", "the session's program group still runs")
        )
        refused = cli.run("destroy", sid)
        assert refused.code == 5 and refused.error["details"]["verdict"] == "ambiguous", refused.stdout
        assert beats(beat, 1.0), "destroy signalled a group it cannot prove"
        os.killpg(cli.manifest(sid)["childPid"], signal.SIGKILL)  # ours: this test's program's group
        wait_until(lambda: not beats(beat, 0.5), what="the chain to end")
    else:
        assert report["skippedSessions"][0]["reason"].startswith("the session's program group still runs")
    assert cli.run("destroy", sid).result["status"] == "destroyed"
    assert not beats(beat, 1.0), "the chain survived destroy (R16)"
    assert cli.run("gc").result["removedSessions"] == [sid]


# Every scan reads the pids handed out last once more (procfs.recent_pids), which most often shows
# a fork chain that a listing of /proc misses. The hold makes those pids 300 ms old before their
# stats are read, as on a busy machine that preempts the scan: by then those members have ended
# and their successors have newer pids, so only a freeze keeps the chain in view.
STALE_RECENT_PIDS = "{command}:read:/stat:1:300:after=/ns_last_pid"


@pytest.mark.parametrize("gc_first", [True, False], ids=["gc-then-destroy", "destroy"])
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_chain_no_scan_shows_is_kept_and_ended_through_the_freeze(cli: Cli, tmp_path: Path, mechanism: str, gc_first: bool) -> None:
    """GcFreezesUnseenGroup (gc) and FreezesUnseenGroup (destroy), forced: with the recent pids
    stale in every scan, gc keeps the session and destroy ends the chain (linux_autogroup by
    SIGSTOP to the group, linux_cgroup by freezing its leaf)."""
    if mechanism == "macos_ps":
        pytest.skip("macos_ps refuses an unprovable chain (test_gc_keeps_and_destroy_ends_a_fork_chain)")
    cli.pin = mechanism
    beat = tmp_path / "beat"
    sid = cli.create("sh", "-c", f'trap "" HUP; {sys.executable} {CHAIN} {beat} 30 & exit 0')["sessionId"]
    wait_until(beat.exists, what="the chain to start")
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="the shell to exit")
    log = tmp_path / "replay.log"
    scanned = "linux_autogroup"  # linux_cgroup reads its leaf, not /proc: no hold is reached
    try:
        # Without the freeze a gc removes the record only when its scan misses every member; a
        # busy machine slows the chain so that most scans see one: each gc is one more try.
        for _ in range(6 if gc_first else 0):
            report = cli.run("gc", env=cli.replay_env(STALE_RECENT_PIDS.format(command="gc"), log)).result
            assert report["removedSessions"] == [], "gc removed the record of a chain that still runs (R20)"
            assert beats(beat, 0.5), "gc stopped the chain"
        destroyed = cli.run("destroy", sid, env=cli.replay_env(STALE_RECENT_PIDS.format(command="destroy"), log))
        assert destroyed.result["status"] == "destroyed", destroyed.stdout
        assert not beats(beat, 1.0), "the chain survived destroy (R16)"
        if mechanism == scanned:
            held = log.read_text()
            assert "hold destroy read" in held and ("hold gc read" in held) == gc_first, "the holds reached the scans"
    finally:
        if beats(beat, 0.3):  # failed: end what this test started, by its group
            os.killpg(cli.program(sid)["pid"], signal.SIGKILL)
