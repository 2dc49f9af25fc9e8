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
