"""No kill ever reaches a process that is not the session's (R15, R19), whatever the records say."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable

import pytest

from tests.conftest import Cli, default_mechanism, pid_alive, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(params=sorted({"linux_autogroup", default_mechanism()}))
def cli(request, cli: Cli) -> Cli:  # type: ignore[no-untyped-def]
    """Every proof here is checked on each mechanism this user can use."""
    cli.pin = request.param
    return cli


def _edit(path, **changes) -> None:  # type: ignore[no-untyped-def]
    record = json.loads(path.read_text())
    record.update(changes)
    path.write_text(json.dumps(record))


def _ended_session(cli: Cli) -> tuple[str, dict]:
    created = cli.create("sh", "-c", "exec sleep 300")
    sid = created["sessionId"]
    os.kill(created["hostPid"], signal.SIGKILL)
    wait_until(lambda: not pid_alive(created["hostPid"]), what="host death")
    os.kill(created["childPid"], signal.SIGKILL)
    wait_until(lambda: not pid_alive(created["childPid"]), what="program death")
    return sid, created


@pytest.mark.parametrize("command", ["inspect", "list", "gc", "gc-dry", "destroy", "destroy-force"])
def test_reused_group_id_is_never_signalled(cli: Cli, unrelated: Callable[[], int], command: str) -> None:
    """ProvesGroupOwnership: program.json and session.json name an unrelated session leader."""
    sid, created = _ended_session(cli)
    other = unrelated()
    folder = cli.folder(sid)
    _edit(folder / "program.json", pid=other)
    # The dead host's pid with its recorded identity: a reconcile proves it dead and kills.
    _edit(folder / "session.json", status="running", childPid=other)
    args = {
        "inspect": ["inspect", sid],
        "list": ["list"],
        "gc": ["gc"],
        "gc-dry": ["gc", "--dry-run"],
        "destroy": ["destroy", sid],
        "destroy-force": ["destroy", sid, "--force"],
    }[command]
    done = cli.run(*args)
    assert done.code == 0, done.stdout
    assert pid_alive(other), f"{command} signalled an unrelated process"
    assert cli.manifest(sid)["status"] in ("failed", "destroyed") if folder.exists() else True


def test_reused_host_pid_is_never_killed_by_destroy_force(cli: Cli, unrelated: Callable[[], int]) -> None:
    """ProvesHostPid: session.json and host.json point at a process that took the host's pid."""
    created = cli.create("cat")
    sid = created["sessionId"]
    os.kill(created["hostPid"], signal.SIGKILL)
    wait_until(lambda: not pid_alive(created["hostPid"]), what="host death")
    other = unrelated()
    folder = cli.folder(sid)
    _edit(folder / "session.json", hostPid=other)
    _edit(folder / "host.json", pid=other)
    done = cli.run("destroy", sid, "--force")
    assert done.code == 0, done.stdout
    assert done.result["status"] == "destroyed"
    assert pid_alive(other)


def test_program_record_naming_an_unrelated_live_process_while_host_lives(
    cli: Cli, unrelated: Callable[[], int]
) -> None:
    """A forged program.json beside a live host: destroy --force kills the host, never the stranger."""
    created = cli.create("sleep", "300")
    sid = created["sessionId"]
    other = unrelated()
    _edit(cli.folder(sid) / "program.json", pid=other)
    done = cli.run("destroy", sid, "--force")
    assert pid_alive(other)
    # The real program is not proven either (its record was replaced): it ends with its host's PTY.
    assert done.code in (0, 5), done.stdout
    wait_until(lambda: not pid_alive(created["childPid"]), what="program to end on hang-up")
