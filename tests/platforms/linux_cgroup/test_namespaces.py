"""The two gaps the cgroup leaf closes, on the real kernel (root: unshare needs it).

(a) Under a PID 1 that never reaps, with another process sending the group SIGCONT in a loop,
    gc keeps a session while its fork chain runs behind zombies, and destroy ends the chain and
    records destroyed only once the leaf reads populated 0 (the leaf is then removed).
    linux_autogroup, without the SIGCONT loop, keeps and ends the same chain through its frozen
    judgement (GcFreezesUnseenGroup, FreezesUnseenGroup); a SIGCONT loop defeats that one.
(b) A CLI in another pid namespace (no private /proc) destroys an ended session: the leaf is
    proven through cgroupfs, not /proc, so no false HOST_TIMEOUT.
(c) A CLI in another cgroup namespace than the session's host, where the leaf's recorded path is
    missing while the leaf runs (MissingLeafNeedsSameRoot): gc keeps the session, destroy ends
    the group by its autogroup token, and from another pid namespace too destroy never records
    destroyed while it runs (HOST_TIMEOUT).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli, agent_tty_command, default_mechanism, wait_until
from tests.platforms.namespaces import in_cgroup, remove_cgroup_tree

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


# ---------------------------------------------------------------- a CLI in another cgroup namespace
#
# A session created inside `unshare --cgroup` (cgroup2 mounted again there, so its root is the
# namespace's root) records its leaf's path relative to that root. A CLI outside resolves the
# same path from the real root, where it is missing while the program's leftover still runs in
# the leaf: a missing path proves the leaf gone only from the root the path was recorded against
# (MissingLeafNeedsSameRoot). Elsewhere the group is judged by the autogroup token.

NS_CREATE = r"""
set -eu
cd "$WORK"
umount "$CGM"  # the outside root's mount (this mount namespace's copy of it)
mount -t cgroup2 none "$CGM"
sid=$($AT create -- sh -c 'trap "" HUP; sleep 300 & exit 0')
until grep -q '"exited"' "$AGENT_TTY_HOME/sessions/$sid/session.json"; do sleep 0.05; done
echo "$sid" > sid
if [ "${HOLD:-0}" = 1 ]; then
  n=0
  until [ -e release ] || [ $n -ge 2400 ]; do sleep 0.05; n=$((n + 1)); done
  $AT --json destroy "$sid" > inner-destroy.json || true
fi
"""


@pytest.fixture
def ns_cgroup(cli: Cli, tmp_path: Path) -> Iterator[Path]:
    """A cgroup of this test's own at the real root, to start the namespace in (so the
    namespace's root is not the real root); everything in it is ended and it is removed before
    the cli fixture's own checks."""
    from agent_tty_plugins.linux_cgroup import cgroup2_mount

    mount = cgroup2_mount()
    assert mount is not None
    top = mount / f"agent-tty-test-ns-{os.getpid()}-{tmp_path.name}"
    top.mkdir()
    try:
        yield top
    finally:
        remove_cgroup_tree(top)


def _start_in_namespace(cli: Cli, tmp_path: Path, top: Path, unshare: list[str], hold: bool) -> subprocess.Popen[str]:
    from agent_tty_plugins.linux_cgroup import cgroup2_mount

    env = cli.env(
        {
            "WORK": str(tmp_path),
            "AT": " ".join(agent_tty_command()),
            "CGM": str(cgroup2_mount()),
            "HOLD": "1" if hold else "0",
            "AGENT_TTY_MECHANISM": "linux_cgroup",
        }
    )
    argv = in_cgroup(top, [*unshare, "sh", "-c", NS_CREATE])
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _leaf_outside(cli: Cli, sid: str, top: Path) -> Path:
    """The session's leaf as this (outside) process reaches it: the recorded path is relative to
    the namespace's root, which is `top`."""
    path = cli.program(sid)["proof"]["cgroup"]["path"]
    leaf = top / path.lstrip("/")
    assert leaf.is_dir(), f"the leaf {path} is not below the namespace's root {top}"
    return leaf


def _sleep_runs_in(leaf: Path) -> bool:
    if "populated 1" not in (leaf / "cgroup.events").read_text().splitlines():
        return False
    for pid in (leaf / "cgroup.procs").read_text().split():
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "sleep":
                return True
        except OSError:
            continue
    return False


def _created_in_cgroup_namespace(cli: Cli, tmp_path: Path, top: Path) -> tuple[str, Path]:
    """Same pid namespace, another cgroup namespace: the session is created there, its program
    exits and leaves `sleep 300` running in the leaf."""
    inner = _start_in_namespace(cli, tmp_path, top, ["unshare", "--cgroup", "--mount"], hold=False)
    _out, err = inner.communicate(timeout=120)
    assert inner.returncode == 0, err
    sid = (tmp_path / "sid").read_text().strip()
    assert cli.program(sid)["mechanism"] == "linux_cgroup"
    leaf = _leaf_outside(cli, sid, top)
    assert _sleep_runs_in(leaf)
    return sid, leaf


def test_gc_outside_the_cgroup_namespace_keeps_a_running_leaf(cli: Cli, tmp_path: Path, ns_cgroup: Path) -> None:
    """R20: the leaf's path is missing in gc's view, but gc's root is not the one the path was
    recorded against: the group is judged by its autogroup token, which finds `sleep` running."""
    sid, leaf = _created_in_cgroup_namespace(cli, tmp_path, ns_cgroup)
    gc = cli.run("gc").result
    assert gc["removedSessions"] == [], "gc removed a session whose leaf still runs"
    assert gc["skippedSessions"] == [{"sessionId": sid, "reason": "the session's program group still runs (destroy ends it)"}]
    assert _sleep_runs_in(leaf) and cli.manifest(sid)["status"] == "exited"
    # The record names the root its path is relative to: the namespace's, our `ns_cgroup`.
    assert cli.program(sid)["proof"]["cgroup"]["rootId"] == ns_cgroup.stat().st_ino


def test_destroy_outside_the_cgroup_namespace_ends_a_running_leaf(cli: Cli, tmp_path: Path, ns_cgroup: Path) -> None:
    """R16: destroy never reads the leaf gone by its missing path; in the same pid namespace the
    autogroup token proves the group, so destroy kills `sleep` and only then records destroyed."""
    sid, leaf = _created_in_cgroup_namespace(cli, tmp_path, ns_cgroup)
    destroyed = cli.run("destroy", sid)
    assert destroyed.code == 0 and destroyed.result["status"] == "destroyed", destroyed.stdout
    wait_until(lambda: not _sleep_runs_in(leaf), timeout=5, what="sleep to end (destroyed is recorded)")
    assert cli.manifest(sid)["status"] == "destroyed"


def test_destroy_outside_the_cgroup_and_pid_namespaces_never_records_a_running_leaf_destroyed(
    cli: Cli, tmp_path: Path, ns_cgroup: Path
) -> None:
    """R16, from another pid namespace too (`unshare --cgroup --pid --mount-proc`): nothing outside
    can prove the group (the leaf is not at its path here, and the token's pids are another pid
    namespace's), so destroy kills nothing and ends with HOST_TIMEOUT while `sleep` runs; the
    session stays exited. A destroy inside the namespace proves the leaf and ends it."""
    inner = _start_in_namespace(
        cli, tmp_path, ns_cgroup, ["unshare", "--cgroup", "--pid", "--mount", "--fork", "--mount-proc"], hold=True
    )
    try:
        wait_until(lambda: (tmp_path / "sid").exists() or inner.poll() is not None, timeout=60, what="the session")
        assert inner.poll() is None, inner.stderr.read() if inner.stderr else ""
        sid = (tmp_path / "sid").read_text().strip()
        leaf = _leaf_outside(cli, sid, ns_cgroup)
        assert _sleep_runs_in(leaf)
        outside = cli.run("destroy", sid)
        assert outside.doc.get("result", {}).get("status") != "destroyed", "destroy recorded destroyed while the leaf runs"
        assert outside.code == 5 and outside.error["code"] == "HOST_TIMEOUT", outside.stdout
        assert _sleep_runs_in(leaf) and cli.manifest(sid)["status"] == "exited"
    finally:
        (tmp_path / "release").touch()
        _out, err = inner.communicate(timeout=120)
    assert inner.returncode == 0, err
    inside = json.loads((tmp_path / "inner-destroy.json").read_text())
    assert inside["ok"] is True and inside["result"]["status"] == "destroyed", inside
    assert not leaf.exists(), "the destroy inside freed the leaf"
