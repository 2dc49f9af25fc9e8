"""Bad input gets a clear error, the right exit code, never a traceback, and loses nothing."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cli, wait_until

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    "content, fragment",
    [
        ('{"version": 1, "sessionId": "x", "sta', "not valid JSON"),
        ("not json at all", "not valid JSON"),
        ('{"version": 99}', "unsupported version 99"),
        ("[]", "expected an object"),
        ("", "not valid JSON"),
    ],
)
def test_corrupt_manifest_is_a_storage_error_that_names_the_file(cli: Cli, content: str, fragment: str) -> None:
    broken = cli.create("true")
    healthy = cli.create("sleep", "300")
    wait_until(lambda: cli.manifest(broken["sessionId"])["status"] == "exited", what="exited")
    path = cli.folder(broken["sessionId"]) / "session.json"
    path.write_text(content)

    done = cli.run("inspect", broken["sessionId"])
    assert done.code == 8
    assert done.error["code"] == "STORAGE_ERROR"
    assert str(path) in done.error["message"] and fragment in done.error["message"]

    listed = cli.run("list", "--all")
    assert listed.code == 0
    assert [s["sessionId"] for s in listed.result["sessions"]] == [healthy["sessionId"]]
    assert listed.result["unreadable"][0]["sessionId"] == broken["sessionId"]

    report = cli.run("gc").result
    assert broken["sessionId"] in {s["sessionId"] for s in report["skippedSessions"]}
    assert path.read_text() == content, "nothing is lost: gc keeps what it cannot read"
    assert cli.run("inspect", healthy["sessionId"]).result["status"] == "running"
    assert cli.run("destroy", broken["sessionId"]).code == 8
    path.unlink()  # let the fixture's cleanup remove the folder


@pytest.mark.parametrize("bad_id", ["../../etc", "/etc", "", "a/b", "..", "UPPER", "x" * 65, "-rf"])
def test_bad_session_ids_are_refused(cli: Cli, bad_id: str) -> None:
    for command in (["inspect", bad_id], ["destroy", bad_id], ["resize", bad_id, "--cols", "80", "--rows", "24"]):
        args = command if not bad_id.startswith("-") else [command[0], "--", *command[1:]]
        done = cli.run(*args)
        assert done.code == 2, (command, done.stdout, done.stderr)
        assert done.error["code"] in ("INVALID_INPUT", "USAGE")


def test_unknown_session_is_exit_3(cli: Cli) -> None:
    for command in (["inspect", "nosuchsession"], ["destroy", "nosuchsession"], ["signal", "nosuchsession", "INT"]):
        done = cli.run(*command)
        assert done.code == 3
        assert done.error["code"] == "SESSION_NOT_FOUND"


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["create", "--cols", "0", "--", "true"], "cols"),
        (["create", "--env", "NOEQUALS", "--", "true"], "--env"),
        (["create", "--idle-timeout", "soon", "--", "true"], "soon"),
        (["create", "--cwd", "/nonexistent-dir", "--", "true"], "not a directory"),
        (["gc", "--older-than", "-5s"], "-5s"),
        (["signal", "abcdefghijkl", "NOTASIGNAL"], "NOTASIGNAL"),
        (["create", "--bogus-flag", "--", "true"], "bogus"),
        (["frobnicate"], "frobnicate"),
    ],
)
def test_bad_values_are_exit_2_with_the_value_named(cli: Cli, args: list[str], fragment: str) -> None:
    done = cli.run(*args)
    assert done.code == 2, (done.stdout, done.stderr)
    assert fragment in done.error["message"]


def test_human_errors_go_to_stderr_without_traceback(cli: Cli) -> None:
    done = cli.run("inspect", "../x", json_out=False)
    assert done.code == 2
    assert done.stdout == ""
    assert "invalid session id" in done.stderr


def test_unreadable_program_record_proves_nothing(cli: Cli) -> None:
    created = cli.create("sleep", "300")
    sid = created["sessionId"]
    (cli.folder(sid) / "program.json").write_text("{broken")
    # A plain destroy goes through the host, which holds the proof in memory.
    assert cli.run("destroy", sid).result["status"] == "destroyed"


def test_json_envelope_is_one_document(cli: Cli) -> None:
    done = cli.run("list")
    assert done.stdout.count("\n") == 1
    doc = json.loads(done.stdout)
    assert doc == {"ok": True, "command": "list", "result": {"sessions": [], "unreadable": [], "incomplete": []}}


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_non_finite_number_is_an_invalid_record(cli: Cli, number: str) -> None:
    """`createdAt: NaN` is not JSON: inspect names the file (strict JSON out), list --all shows
    the session as unreadable and still lists the others (it used to fail the whole Home)."""
    broken = cli.create("true")
    healthy = cli.create("sleep", "300")
    wait_until(lambda: cli.manifest(broken["sessionId"])["status"] == "exited", what="exited")
    path = cli.folder(broken["sessionId"]) / "session.json"
    text = path.read_text()
    created = json.dumps(cli.manifest(broken["sessionId"])["createdAt"])
    path.write_text(text.replace(f'"createdAt":{created}', f'"createdAt":{number}'))
    assert number in path.read_text()

    done = cli.run("inspect", broken["sessionId"])
    assert done.code == 8 and done.error["code"] == "STORAGE_ERROR", done.stdout
    assert str(path) in done.error["message"]
    json.loads(done.stdout, parse_constant=lambda name: pytest.fail(f"{name} in --json output"))

    listed = cli.run("list", "--all")
    assert listed.code == 0, listed.stdout
    json.loads(listed.stdout, parse_constant=lambda name: pytest.fail(f"{name} in --json output"))
    assert [s["sessionId"] for s in listed.result["sessions"]] == [healthy["sessionId"]]
    assert [u["sessionId"] for u in listed.result["unreadable"]] == [broken["sessionId"]]
    path.unlink()  # let the fixture's cleanup remove the folder
