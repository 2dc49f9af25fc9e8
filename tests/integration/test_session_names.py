"""A session named on the command line by its id, its name or a unique id prefix (Docker's
order), with what matched in the result; a duplicate live name refused at create."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli, group_members, wait_until

pytestmark = pytest.mark.integration


def test_a_name_and_an_id_prefix_address_the_session(cli: Cli) -> None:
    sid = cli.create("sh", "-c", "sleep 60", options=("--name", "colors"))["sessionId"]
    try:
        by_name = cli.run("inspect", "colors").result
        assert by_name["sessionId"] == sid and by_name["resolvedFrom"] == {"ref": "colors", "by": "name"}
        by_prefix = cli.run("snapshot", sid[:5]).result
        assert by_prefix["sessionId"] == sid and by_prefix["resolvedFrom"] == {"ref": sid[:5], "by": "prefix"}
        assert "resolvedFrom" not in cli.run("inspect", sid).result  # the id itself: nothing to say
        missing = cli.run("inspect", "no-such-name")
        assert missing.code == 3 and missing.error["code"] == "SESSION_NOT_FOUND"
        assert cli.run("inspect", "../x").error["code"] == "INVALID_INPUT"
    finally:
        assert cli.run("destroy", "colors").result["sessionId"] == sid


def test_a_duplicate_live_name_is_refused_and_nothing_starts(cli: Cli) -> None:
    sid = cli.create("sh", "-c", "sleep 60", options=("--name", "build"))["sessionId"]
    try:
        again = cli.run("create", "--name", "build", "--", "sh", "-c", "sleep 60")
        assert again.code == 2 and again.error["details"]["sessionId"] == sid
        assert [s["sessionId"] for s in cli.run("list", "--all").result["sessions"]] == [sid]
        assert cli.run("create", "--name", sid, "--", "true").error["code"] == "INVALID_INPUT"  # another's id
    finally:
        cli.run("destroy", sid)


def test_a_live_name_wins_over_ended_ones_and_ended_twins_are_ambiguous(cli: Cli) -> None:
    first = cli.create("sh", "-c", "sleep 60", options=("--name", "web"))["sessionId"]
    cli.run("destroy", first)
    second = cli.create("sh", "-c", "sleep 60", options=("--name", "web"))["sessionId"]  # the name is free again
    assert cli.run("inspect", "web").result["sessionId"] == second
    cli.run("destroy", second)
    ambiguous = cli.run("inspect", "web")
    assert ambiguous.code == 2 and sorted(ambiguous.error["details"]["matches"]) == sorted([first, second])
    # A destroy by an ambiguous name touches nothing.
    assert cli.run("destroy", "web").code == 2


def test_a_destroy_by_name_from_inside_the_program_reruns_on_the_resolved_id(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    command = " ".join(cli.command)
    created = cli.create("sh", "-c", f"sleep 0.5; {command} --json destroy inner --force > {out}; sleep 300", options=("--name", "inner"))
    wait_until(lambda: out.exists() and out.read_text().strip(), timeout=15, what="destroy output")
    doc = json.loads(out.read_text())
    assert doc["ok"] is True and doc["result"]["sessionId"] == created["sessionId"]
    assert cli.manifest(created["sessionId"])["status"] == "destroyed"
    assert group_members(created["childPid"]) == []


def test_a_name_that_begins_another_sessions_id_is_ambiguous_and_ends_nothing(cli: Cli) -> None:
    first = cli.create("sh", "-c", "sleep 60")["sessionId"]
    prefix = first[:3]
    second = cli.create("sh", "-c", "sleep 60", options=("--name", prefix))["sessionId"]
    try:
        refused = cli.run("destroy", prefix)
        assert refused.code == 2 and refused.error["code"] == "INVALID_INPUT", refused.stdout
        assert sorted(refused.error["details"]["matches"]) == sorted([first, second])
        assert [cli.run("inspect", sid).result["status"] for sid in (first, second)] == ["running", "running"]
    finally:
        cli.run("destroy", first)
        cli.run("destroy", second)
