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


def _variants() -> list[object]:
    """A full manifest, and each of its fields missing, null, or replaced by a value of every
    other JSON kind (and a few near misses: bool for int, NaN, an unknown status)."""
    full = json.loads(
        _manifest(
            host_pid=10, child_pid=11, name="n", cwd="/", env={"A": "b"}, mechanism="m", exit_code=0,
            failure=Failure(reason="host-death", message="m"),
        ).to_json()
    )
    kinds: list[object] = [None, True, 0, 1.5, float("nan"), "s", "running", [], ["x"], [1], {}, {"k": 1}, {"reason": "r", "message": "m"}]
    variants: list[object] = [full, [], "x", None, {**full, "version": 2}, {**full, "extra": 1}]
    for key in full:
        variants.append({k: v for k, v in full.items() if k != key})
        variants.extend({**full, key: value} for value in kinds)
    return variants


def test_the_fast_reader_agrees_with_the_checked_one() -> None:
    """Manifest.from_obj reads a valid record by per-field checkers and redoes any refusal
    step by step for its message: both must accept the same records, as equal values."""
    accepted = refused = 0
    for variant in _variants():
        try:
            checked = Manifest._read_checked(variant)
        except RecordError:
            with pytest.raises(RecordError):
                Manifest._read_valid(variant)
            refused += 1
            continue
        fast = Manifest._read_valid(variant)
        assert fast == checked and repr(fast) == repr(checked), variant
        assert Manifest.from_obj(variant) == checked
        accepted += 1
    assert accepted > 20 and refused > 100
