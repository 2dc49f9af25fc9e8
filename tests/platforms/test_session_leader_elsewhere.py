"""ReRunsInNewSession under a session leader outside the CLI's pid namespace (a container's
shell, a CI runner): os.getsid(0) reads 0 there, so the session id alone cannot tell whether a
destroy runs inside the program's session.

A destroy that re-runs itself detached cannot be stopped by a signal to the process the user
started (a SIGKILL reaches only the parent), so a destroy from outside the program must run in
place. Each case holds every destroy process's first read of session.json and reads the held
pids from the replay log: the destroy's own pid alone means it ran in place; another pid is a
re-run copy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, agent_tty_command, default_mechanism

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare"),
]

MECHANISMS = [
    pytest.param(
        "linux_cgroup",
        marks=pytest.mark.skipif(default_mechanism() != "linux_cgroup", reason="no cgroup leaves here"),
    ),
    pytest.param(
        "linux_autogroup",
        marks=pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no autogroups here"),
    ),
]

# Run as PID 1 of a new pid namespace whose session leader (the unshare's caller) is outside
# it. With no $SID it first creates a session there, so host and program share the namespace.
SCRIPT = r"""
set -eu
[ "$($PY -c 'import os; print(os.getsid(0))')" = 0 ] || { echo "session id is not 0" >&2; exit 97; }
if [ -z "${SID:-}" ]; then SID=$($AT create -- sh -c "trap '' HUP; exec sleep 300"); fi
echo "$SID" > "$WORK/sid"
AGENT_TTY_REPLAY_HOLD="destroy:read:/session.json:1:300" $AT --json destroy "$SID" > "$WORK/destroy.json" &
echo $! > "$WORK/destroy.pid"
wait $! || true
"""


def _destroy_in_new_pid_namespace(cli: Cli, tmp_path: Path, sid: str = "") -> tuple[str, bool, dict[str, Any]]:
    """Run SCRIPT; the session id, whether the destroy alone was held (no re-run copy; pids in
    the new namespace's numbering) and the destroy's JSON."""
    log = tmp_path / "replay.log"
    env = cli.env(
        {
            **cli.replay_env("", log),
            "WORK": str(tmp_path),
            "AT": " ".join(agent_tty_command()),
            "PY": sys.executable,
            "SID": sid,
        }
    )
    done = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    held = {int(pid) for pid in re.findall(r"^hold destroy read \S+ 1 pid=(\d+)$", log.read_text(), re.M)}
    assert held, log.read_text()
    in_place = held == {int((tmp_path / "destroy.pid").read_text())}
    doc = json.loads((tmp_path / "destroy.json").read_text())
    return (tmp_path / "sid").read_text().strip(), in_place, doc


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_destroy_from_outside_the_program_runs_in_place(cli: Cli, tmp_path: Path, mechanism: str) -> None:
    """Host, program and destroy share the new pid namespace: the program leads a session that
    namespace sees, so the destroy's session (id 0) is not the program's, and it runs in place."""
    cli.pin = mechanism
    sid, in_place, doc = _destroy_in_new_pid_namespace(cli, tmp_path)
    assert in_place, "the destroy re-ran itself detached"
    assert doc["ok"] is True and doc["result"]["status"] == "destroyed", doc
    assert cli.manifest(sid)["status"] == "destroyed"


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_destroy_that_cannot_tell_still_reruns(cli: Cli, tmp_path: Path, mechanism: str) -> None:
    """The host runs in the test's pid namespace, the destroy in a new one with session id 0:
    nothing says the program's session is not the destroy's, so it still re-runs detached."""
    cli.pin = mechanism
    created = cli.create("sleep", "300")
    _sid, in_place, _doc = _destroy_in_new_pid_namespace(cli, tmp_path, created["sessionId"])
    assert not in_place, "a destroy that cannot tell ran in place"
    finished = cli.run("destroy", created["sessionId"])
    assert finished.code == 0, finished.stdout
    assert cli.manifest(created["sessionId"])["status"] == "destroyed"
