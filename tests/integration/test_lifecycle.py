"""create, list, inspect, destroy and gc against real hosts, PTYs and process groups."""

from __future__ import annotations

import json
import os
import signal

import pytest

from tests.conftest import Cli, default_mechanism, group_members, pid_alive, wait_until

pytestmark = pytest.mark.integration

HUP_IGNORING_TREE = ("sh", "-c", 'trap "" HUP; sleep 300 & wait')


def test_canonical_loop_create_inspect_destroy(cli: Cli) -> None:
    created = cli.create("bash")
    assert created["status"] == "running"
    assert created["mechanism"] == default_mechanism()
    assert pid_alive(created["hostPid"]) and pid_alive(created["childPid"])

    inspected = cli.run("inspect", created["sessionId"]).result
    assert inspected["status"] == "running"
    assert inspected["childPid"] == created["childPid"]
    assert inspected["derived"]["host"] == "alive"
    assert os.path.exists(inspected["socketPath"])

    destroyed = cli.run("destroy", created["sessionId"]).result
    assert destroyed["destroyed"] is True and destroyed["status"] == "destroyed"
    assert cli.manifest(created["sessionId"])["status"] == "destroyed"
    wait_until(lambda: not pid_alive(created["hostPid"]), what="host to end")
    assert not group_members(created["childPid"])
    assert not os.path.exists(inspected["socketPath"])


def test_files_are_private(cli: Cli) -> None:
    created = cli.create("sleep", "300")
    folder = cli.folder(created["sessionId"])
    assert oct(os.stat(cli.home).st_mode & 0o777) == "0o700"
    assert oct(os.stat(folder).st_mode & 0o777) == "0o700"
    for name in ("session.json", "host.json", "program.json", "events.jsonl"):
        assert oct(os.stat(folder / name).st_mode & 0o777) == "0o600", name
    socket_path = cli.manifest(created["sessionId"])["socketPath"]
    assert oct(os.stat(socket_path).st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("mechanism", sorted({"linux_autogroup", default_mechanism()}))
def test_destroy_ends_a_group_that_ignores_hangup(cli: Cli, force: bool, mechanism: str) -> None:
    cli.pin = mechanism
    created = cli.create(*HUP_IGNORING_TREE)
    pgid = created["childPid"]
    wait_until(lambda: len(group_members(pgid)) >= 2, what="sleep to start")
    args = ["destroy", created["sessionId"], *(["--force"] if force else [])]
    done = cli.run(*args)
    assert done.code == 0, done.stdout
    assert done.result["status"] == "destroyed"
    assert group_members(pgid) == []
    assert cli.manifest(created["sessionId"])["status"] == "destroyed"


def test_host_killed_then_list_records_failed_and_ends_group(cli: Cli) -> None:
    created = cli.create(*HUP_IGNORING_TREE)
    pgid = created["childPid"]
    wait_until(lambda: len(group_members(pgid)) >= 2, what="sleep to start")
    os.kill(created["hostPid"], signal.SIGKILL)
    wait_until(lambda: not pid_alive(created["hostPid"]), what="host to die")

    listed = cli.run("list", "--all").result
    (entry,) = listed["sessions"]
    assert entry["status"] == "failed"
    assert entry["failure"]["reason"] == "host-death"
    assert group_members(pgid) == []
    # R4/R13: the record still names the program it stopped.
    assert cli.manifest(created["sessionId"])["childPid"] == pgid


def test_host_death_after_the_program_exit_keeps_the_exit(cli: Cli) -> None:
    """ReconcileRecordsExit (R4), found by the model: the program exited and the host died
    while it waited for what the program left. The exit is recorded, so the session ends
    `exited` with its code, not `failed`."""
    created = cli.create("sh", "-c", 'trap "" HUP; sleep 300 & exit 3')
    sid, pgid = created["sessionId"], created["childPid"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exiting", what="exiting")
    os.kill(created["hostPid"], signal.SIGKILL)
    wait_until(lambda: not pid_alive(created["hostPid"]), what="host to die")

    (entry,) = cli.run("list", "--all").result["sessions"]
    manifest = cli.manifest(sid)
    assert (entry["status"], manifest["status"]) == ("exited", "exited")
    assert manifest["exitCode"] == 3 and manifest["failure"] is None
    assert manifest["childPid"] == pgid and group_members(pgid) == []


def test_program_exit_is_recorded_with_its_code(cli: Cli) -> None:
    created = cli.create("sh", "-c", "exit 7")
    sid = created["sessionId"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exited")
    manifest = cli.manifest(sid)
    assert manifest["exitCode"] == 7 and manifest["exitSignal"] is None
    # DestroyKeepsExitCode
    destroyed = cli.run("destroy", sid).result
    assert destroyed["status"] == "destroyed" and destroyed["exitCode"] == 7


def test_destroy_stops_what_an_exited_program_left(cli: Cli) -> None:
    created = cli.create("sh", "-c", 'trap "" HUP; sleep 300 & exit 0')
    sid, pgid = created["sessionId"], created["childPid"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exited")
    assert group_members(pgid), "the leftover sleep should still run"
    # GcKeepsLiveGroup: gc keeps the record that proves the leftover.
    report = cli.run("gc").result
    assert report["removedSessions"] == []
    assert report["skippedSessions"][0]["reason"].startswith("the session's program group still runs")
    # DestroyStopsLeftovers
    assert cli.run("destroy", sid).result["status"] == "destroyed"
    assert group_members(pgid) == []
    assert cli.run("gc").result["removedSessions"] == [sid]
    assert not cli.folder(sid).exists()


def test_gc_never_removes_a_live_session_and_dry_run_removes_nothing(cli: Cli) -> None:
    live = cli.create("sleep", "300")
    ended = cli.create("true")
    wait_until(lambda: cli.manifest(ended["sessionId"])["status"] == "exited", what="exited")

    dry = cli.run("gc", "--dry-run").result
    assert dry["dryRun"] is True
    assert dry["removedSessions"] == [ended["sessionId"]]
    assert cli.folder(ended["sessionId"]).exists()

    report = cli.run("gc").result
    assert report["removedSessions"] == [ended["sessionId"]]
    assert {s["sessionId"] for s in report["skippedSessions"]} == {live["sessionId"]}
    assert cli.folder(live["sessionId"]).exists()
    assert cli.run("inspect", live["sessionId"]).result["status"] == "running"


def test_gc_filters(cli: Cli) -> None:
    ended = cli.create("true")
    wait_until(lambda: cli.manifest(ended["sessionId"])["status"] == "exited", what="exited")
    stale = cli.run("gc", "--stale-only").result
    assert stale["removedSessions"] == [] and "not stale" in stale["skippedSessions"][0]["reason"]
    young = cli.run("gc", "--older-than", "1h").result
    assert young["removedSessions"] == [] and "younger than" in young["skippedSessions"][0]["reason"]
    assert cli.run("gc", "--older-than", "0s").result["removedSessions"] == [ended["sessionId"]]


def test_list_hides_ended_sessions_unless_all(cli: Cli) -> None:
    live = cli.create("sleep", "300")
    ended = cli.create("true")
    wait_until(lambda: cli.manifest(ended["sessionId"])["status"] == "exited", what="exited")
    active = [s["sessionId"] for s in cli.run("list").result["sessions"]]
    assert active == [live["sessionId"]]
    every = [s["sessionId"] for s in cli.run("list", "--all").result["sessions"]]
    assert sorted(every) == sorted([live["sessionId"], ended["sessionId"]])


def test_resize_and_signal(cli: Cli) -> None:
    created = cli.create("sh", "-c", 'trap "echo got-int" INT; while :; do sleep 0.05; done')
    sid = created["sessionId"]
    resized = cli.run("resize", sid, "--cols", "100", "--rows", "30").result
    assert (resized["cols"], resized["rows"]) == (100, 30)
    assert (cli.manifest(sid)["cols"], cli.manifest(sid)["rows"]) == (100, 30)
    sent = cli.run("signal", sid, "INT").result
    assert sent["signal"] == "SIGINT" and sent["delivered"] is True
    events = (cli.folder(sid) / "events.jsonl").read_text()
    wait_until(lambda: "got-int" in (cli.folder(sid) / "events.jsonl").read_text(), what="trap output")
    assert '"type":"resize"' in events
    cli.run("signal", sid, "KILL")
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exited")
    assert cli.manifest(sid)["exitSignal"] == signal.SIGKILL
    # A session that is not commandable: exit 4.
    assert cli.run("resize", sid, "--cols", "90", "--rows", "20").code == 4
    assert cli.run("signal", sid, "INT").code == 4


def test_sigterm_to_host_records_destroyed(cli: Cli) -> None:
    created = cli.create(*HUP_IGNORING_TREE)
    sid, pgid = created["sessionId"], created["childPid"]
    wait_until(lambda: len(group_members(pgid)) >= 2, what="sleep to start")
    os.kill(created["hostPid"], signal.SIGTERM)
    wait_until(lambda: cli.manifest(sid)["status"] == "destroyed", timeout=10, what="destroyed")
    assert group_members(pgid) == []


def test_idle_timeout_hangs_up_and_ends_exited(cli: Cli) -> None:
    created = cli.create(*HUP_IGNORING_TREE, options=("--idle-timeout", "300ms"))
    sid, pgid = created["sessionId"], created["childPid"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", timeout=10, what="exited")
    assert group_members(pgid) == []


def test_program_that_cannot_start_is_a_clear_error(cli: Cli) -> None:
    done = cli.run("create", "--", "/nonexistent/program")
    assert done.code == 2
    assert "could not start" in done.error["message"]
    assert done.error["details"]["sessionId"]


def test_program_environment_and_cwd(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "env.txt"
    created = cli.create(
        "sh", "-c", f'echo "$AGENT_TTY_SESSION_ID $FOO $TERM $(pwd)" > {out}',
        options=("--env", "FOO=bar", "--cwd", str(tmp_path), "--term", "xterm"),
    )
    wait_until(lambda: out.exists() and out.read_text().strip(), what="env file")
    assert out.read_text().split() == [created["sessionId"], "bar", "xterm", str(tmp_path)]


def test_destroy_from_inside_the_program_reruns_outside(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """ReRunsInNewSession: a destroy --force the program runs would die in its own kill."""
    out = tmp_path / "out.json"
    command = " ".join(cli.command)
    created = cli.create(
        "sh", "-c", f'sleep 0.5; {command} --json destroy "$AGENT_TTY_SESSION_ID" --force > {out}; sleep 300'
    )
    sid = created["sessionId"]
    wait_until(lambda: out.exists() and out.read_text().strip(), timeout=15, what="destroy output")
    doc = json.loads(out.read_text())
    assert doc["ok"] is True and doc["result"]["destroyed"] is True
    assert cli.manifest(sid)["status"] == "destroyed"
    assert group_members(created["childPid"]) == []


def test_create_waits_for_a_slow_host_start_up_write(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """HostWaitsForManifest + CreateRecordsHostPid: gc during the start-up skips the session."""
    log = tmp_path / "replay.log"
    creating = cli.start("create", "--", "sleep", "300", env=cli.replay_env("host:rename:/session.json:1:1500", log))
    wait_until(lambda: log.exists() and "hold" in log.read_text(), what="host hold")
    report = cli.run("gc").result
    assert report["removedSessions"] == []
    assert "still alive" in report["skippedSessions"][0]["reason"]
    out, err = creating.communicate(timeout=30)
    assert creating.returncode == 0, (out, err)
    assert json.loads(out)["result"]["status"] == "running"


def test_host_waits_for_a_slow_create(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """HostWaitsForManifest: the host starts before create's first manifest write lands."""
    log = tmp_path / "replay.log"
    done = cli.run("create", "--", "sleep", "300", env=cli.replay_env("create:rename:/session.json:1:1500", log))
    assert done.code == 0, done.stdout
    assert "hold create rename" in log.read_text()
    assert done.result["status"] == "running" and pid_alive(done.result["childPid"])


def test_create_that_gives_up_stops_its_session(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """CreateStopsOnGiveUp: the host's start-up write is held past create's readiness wait."""
    log = tmp_path / "replay.log"
    env = cli.replay_env("host:rename:/session.json:1:2500", log)
    env["AGENT_TTY_CREATE_TIMEOUT_S"] = "1"
    done = cli.run("create", "--", "sh", "-c", 'trap "" HUP; exec sleep 300', env=env)
    assert done.code == 6
    assert done.error["code"] == "HOST_UNREACHABLE"
    sid = done.error["details"]["sessionId"]
    wait_until(lambda: cli.manifest(sid)["status"] == "destroyed", timeout=15, what="destroyed")
    program = cli.program(sid)
    assert group_members(program["pid"]) == []


def test_gc_and_destroy_race_on_removed_folder(cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """ManifestWriteNeedsFolder: a write after gc removed the folder fails, the folder stays gone."""
    created = cli.create("sh", "-c", "sleep 0.3")
    sid = created["sessionId"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exited")
    log = tmp_path / "replay.log"
    # destroy holds its read of program.json, right before its marker and manifest writes.
    destroying = cli.start("destroy", sid, env=cli.replay_env("destroy:read:/program.json:1:3000", log))
    wait_until(lambda: log.exists() and "hold" in log.read_text(), what="destroy hold")
    assert cli.run("gc").result["removedSessions"] == [sid]
    out, _ = destroying.communicate(timeout=30)
    assert destroying.returncode == 3, out
    assert json.loads(out)["error"]["code"] == "SESSION_NOT_FOUND"
    assert not cli.folder(sid).exists()
