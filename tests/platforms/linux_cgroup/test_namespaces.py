"""The two gaps the cgroup leaf closes, on the real kernel (root: unshare needs it).

(a) Under a PID 1 that never reaps, with another process sending the group SIGCONT in a loop,
    gc keeps a session while its fork chain runs behind zombies, and destroy ends the chain and
    records destroyed only once the leaf reads populated 0 (the leaf is then removed).
    linux_autogroup, without the SIGCONT loop, keeps and ends the same chain through its frozen
    judgement (GcFreezesUnseenGroup, FreezesUnseenGroup); a SIGCONT loop defeats that one.
(b) A CLI in another pid namespace (no private /proc) destroys an ended session: the leaf is
    proven through cgroupfs, not /proc, so no false HOST_TIMEOUT.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli, agent_tty_command, default_mechanism, wait_until

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        default_mechanism() != "linux_cgroup" or os.geteuid() != 0 or shutil.which("unshare") is None,
        reason="needs root, unshare and cgroup leaves",
    ),
]

SCRIPT = r"""
set -eu
cd "$WORK"
sid=$($AT create -- sh -c "trap '' HUP; $PY $FIX/fork_chain.py $WORK/beat 30 & exit 0")
echo "$sid" > sid
until [ -s beat ]; do sleep 0.05; done
until grep -q '"exited"' "$AGENT_TTY_HOME/sessions/$sid/session.json"; do sleep 0.05; done
pgid=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['pid'])" "$AGENT_TTY_HOME/sessions/$sid/program.json")
if [ "${SIGCONT_LOOP:-0}" = 1 ]; then $PY $FIX/sigcont_loop.py "$pgid" 15 & fi
zombies=$(ps -eo stat= | grep -c '^Z' || true)
echo "$zombies" > zombies
$AT --json gc > gc.json || true
$AT --json destroy "$sid" > destroy.json || true
b1=$(cat beat); sleep 0.4; b2=$(cat beat)
if [ "$b1" = "$b2" ]; then echo ended > chain; else echo survived > chain; fi
cp "$AGENT_TTY_HOME/sessions/$sid/session.json" final.json || true  # gone when gc removed it
cp "$AGENT_TTY_HOME/sessions/$sid/program.json" program.json || true
"""



def _run_under_non_reaping_init(cli: Cli, tmp_path: Path, mechanism: str, sigcont_loop: bool) -> None:
    """SCRIPT under `unshare --pid --fork --mount-proc` with a PID 1 that never reaps; its
    results land in tmp_path."""
    env = cli.env(
        {
            "WORK": str(tmp_path),
            "AT": " ".join(agent_tty_command()),
            "PY": sys.executable,
            "FIX": str(FIXTURES),
            "AGENT_TTY_MECHANISM": mechanism,
            "SIGCONT_LOOP": "1" if sigcont_loop else "0",
        }
    )
    done = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, str(FIXTURES / "nonreaping_init.py"), "sh", "-c", SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_non_reaping_pid_1_with_a_sigcont_loop(cli: Cli, tmp_path: Path) -> None:
    from agent_tty_plugins.linux_cgroup import cgroup2_mount

    _run_under_non_reaping_init(cli, tmp_path, "linux_cgroup", sigcont_loop=True)
    gc = json.loads((tmp_path / "gc.json").read_text())
    assert gc["result"]["removedSessions"] == [], "gc removed a session whose chain runs behind zombies"
    assert gc["result"]["skippedSessions"][0]["reason"].startswith("the session's program group still runs")
    destroy = json.loads((tmp_path / "destroy.json").read_text())
    assert destroy["ok"] is True and destroy["result"]["status"] == "destroyed", destroy
    assert (tmp_path / "chain").read_text().strip() == "ended"
    assert json.loads((tmp_path / "final.json").read_text())["status"] == "destroyed"
    leaf = json.loads((tmp_path / "program.json").read_text())["proof"]["cgroup"]["path"]
    assert not (cgroup2_mount() / leaf.lstrip("/")).exists(), "destroyed is written once the leaf is empty"
    assert int((tmp_path / "zombies").read_text()) > 0, "the chain's ended members stay zombies in view"


def test_non_reaping_pid_1_autogroup_freezes_the_chain(cli: Cli, tmp_path: Path) -> None:
    """GcFreezesUnseenGroup: behind zombies, two scans that show only zombies would read the chain
    ended; the frozen judgement stops it first, so gc keeps the session and destroy ends it."""
    _run_under_non_reaping_init(cli, tmp_path, "linux_autogroup", sigcont_loop=False)
    assert int((tmp_path / "zombies").read_text()) > 0, "the chain's ended members stay zombies in view"
    gc = json.loads((tmp_path / "gc.json").read_text())
    assert gc["result"]["removedSessions"] == [], "gc removed a session whose chain runs behind zombies"
    assert gc["result"]["skippedSessions"][0]["reason"].startswith("the session's program group still runs")
    destroy = json.loads((tmp_path / "destroy.json").read_text())
    assert destroy["ok"] is True and destroy["result"]["status"] == "destroyed", destroy
    assert (tmp_path / "chain").read_text().strip() == "ended"


@pytest.mark.parametrize("mechanism, ok", [("linux_cgroup", True), ("linux_autogroup", False)])
def test_cli_in_another_pid_namespace_destroys_an_ended_session(cli: Cli, mechanism: str, ok: bool) -> None:
    cli.pin = mechanism
    sid = cli.create("true")["sessionId"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exit")
    done = subprocess.run(
        ["unshare", "--pid", "--fork", *agent_tty_command(), "--json", "destroy", sid],
        env=cli.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    doc = json.loads(done.stdout)
    if ok:
        assert done.returncode == 0 and doc["result"]["status"] == "destroyed", doc
    else:
        # The old limit, kept where no leaf proves the group: /proc is another pid space's,
        # so the group reads unshared and destroy waits it out (docs/USAGE.md, Limits).
        assert done.returncode == 5 and doc["error"]["code"] == "HOST_TIMEOUT", doc
        assert cli.manifest(sid)["status"] == "exited"


def test_cli_in_another_pid_namespace_reads_a_starting_host_through_host_json(cli: Cli, tmp_path: Path) -> None:
    """CreateRecordsHost (R2): create writes host.json before its first manifest, so a list in
    another pid namespace, which finds no process with the host's pid, reads the host unknown
    (not dead) while the host has not written its own record yet."""
    log = tmp_path / "replay.log"
    creating = cli.start("create", "--", "sleep", "300", env=cli.replay_env("host:read:/session.json:1:3000", log))
    wait_until(lambda: log.exists() and "hold" in log.read_text(), what="the host to hold its manifest read")
    listed = subprocess.run(
        ["unshare", "--pid", "--fork", *agent_tty_command(), "--json", "list"],
        env=cli.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    session = json.loads(listed.stdout)["result"]["sessions"][0]
    assert session["status"] == "running", session
    out, _ = creating.communicate(timeout=30)
    assert creating.returncode == 0 and json.loads(out)["result"]["status"] == "running"
