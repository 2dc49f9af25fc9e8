from __future__ import annotations

import json

import pytest

from agent_tty.protocol.status import Status
from agent_tty.storage.records import Failure, HostRecord, Manifest, ProgramRecord
from agent_tty.storage.schema import RecordError


def _manifest(**changes) -> Manifest:  # type: ignore[no-untyped-def]
    base = dict(
        version=1, session_id="abc", status=Status.RUNNING, argv=("bash",), cols=80, rows=24,
        created_at=1.0, updated_at=2.0, socket_path="/tmp/x.sock",
    )
    base.update(changes)
    return Manifest(**base)  # type: ignore[arg-type]


def test_round_trip_uses_camel_case_keys() -> None:
    manifest = _manifest(host_pid=10, failure=Failure(reason="host-death", message="m"))
    obj = json.loads(manifest.to_json())
    assert obj["hostPid"] == 10 and obj["sessionId"] == "abc" and obj["failure"]["reason"] == "host-death"
    assert Manifest.from_json(manifest.to_json()) == manifest


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda o: o.update(version=2), "unsupported version 2"),
        (lambda o: o.pop("version"), "unsupported version None"),
        (lambda o: o.update(cols="80"), "cols: expected int, got str"),
        (lambda o: o.update(cols=True), "cols: expected int, got bool"),
        (lambda o: o.update(status="paused"), "'paused' is not a known Status"),
        (lambda o: o.update(argv="bash"), "argv: expected a list"),
        (lambda o: o.update(argv=[1]), "argv[0]: expected str"),
        (lambda o: o.pop("sessionId"), "missing field 'sessionId'"),
        (lambda o: o.update(env={"A": 1}), "env.A: expected str"),
        (lambda o: o.update(failure={"reason": 1, "message": "m"}), "failure"),
        (lambda o: o.update(hostPid=1.5), "hostPid"),
    ],
)
def test_invalid_fields_are_named(mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    obj = json.loads(_manifest().to_json())
    mutate(obj)
    with pytest.raises(RecordError) as info:
        Manifest.from_obj(obj, "session.json")
    assert message in str(info.value)
    assert str(info.value).startswith("session.json")


def test_unknown_keys_of_the_same_version_are_ignored() -> None:
    obj = json.loads(_manifest().to_json())
    obj["addedLater"] = {"x": 1}
    assert Manifest.from_obj(obj) == _manifest()


def test_not_json() -> None:
    with pytest.raises(RecordError, match="not valid JSON"):
        Manifest.from_json(b"\xff\xfe")


def test_other_records() -> None:
    host = HostRecord(version=1, mechanism="m", pid=3, identity={"bootId": "b", "startTime": 5})
    assert HostRecord.from_json(host.to_json()) == host
    program = ProgramRecord(version=1, mechanism="m", pid=4, proof=None)
    assert ProgramRecord.from_json(program.to_json()) == program
    with pytest.raises(RecordError):
        ProgramRecord.from_json('{"version":1,"mechanism":"m","pid":"4"}')
