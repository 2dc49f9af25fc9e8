"""The plain classes that replaced dataclasses on the hot path (agent_tty/frozen.py, storage/schema.py)
behave as the frozen dataclasses did: construction, equality, hashing, repr, replace, no assignment."""

from __future__ import annotations

import importlib

import pytest

from agent_tty.frozen import Frozen, FrozenInstanceError
from agent_tty.platform.access import Access
from agent_tty.protocol.status import Status
from agent_tty.storage.records import Event, Failure, Manifest
from agent_tty.storage.schema import Record
from agent_tty.terminal.replay import LoggedEvent


def _subclasses(base: type) -> list[type]:
    found, todo = [], [base]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


def test_every_frozen_class_names_its_annotated_fields_in_its_slots() -> None:
    """`__slots__` is the list of fields; the annotations are what a reader (and model/facts.py,
    for StatusPolicy) reads: the two must say the same."""
    for name in (
        "agent_tty.protocol.status", "agent_tty.ops.names", "agent_tty.platform.access", "agent_tty.storage.home",
        "agent_tty.lifecycle.reconcile", "agent_tty.lifecycle.incomplete", "agent_tty.platform.types",
        "agent_tty.storage.space", "agent_tty_plugins._posix.procfs", "agent_tty_plugins.linux_cgroup",
    ):
        importlib.import_module(name)
    classes = _subclasses(Frozen)
    assert len(classes) >= 17
    for cls in classes:
        assert tuple(cls.__dict__.get("__annotations__", {})) == cls.__slots__, cls


def test_frozen_behaves_as_a_frozen_dataclass() -> None:
    one = Access(1000, False, False, False, "0700")
    same = Access(owner=1000, others_write=False, others_read=False, others_rename=False, shown="0700")
    assert one == same and hash(one) == hash(same) and one != one.replace(shown="0755")
    assert repr(one) == "Access(owner=1000, others_write=False, others_read=False, others_rename=False, shown='0700')"
    assert one.replace(owner=0).owner == 0 and one.owner == 1000
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'owner'"):
        one.owner = 0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del one.shown  # type: ignore[misc]
    with pytest.raises(TypeError, match=r"missing 1 required positional argument: 'shown'"):
        Access(1000, False, False, False)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'mode'"):
        Access(1000, False, False, False, "0700", mode=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes 6 positional arguments but 7 were given"):
        Access(1000, False, False, False, "0700", 1)  # type: ignore[call-arg]
    assert not hasattr(one, "__dict__")


def test_records_behave_as_frozen_dataclasses() -> None:
    manifest = Manifest(
        version=1, session_id="abc", status=Status.RUNNING, argv=("bash",), cols=80, rows=24,
        created_at=1.0, updated_at=2.0, socket_path="/tmp/x.sock",
    )
    assert manifest.env == {} and manifest.env is not Manifest.from_json(manifest.to_json()).env  # a factory per record
    assert manifest == manifest.replace() and manifest != manifest.replace(cols=81)
    assert repr(Failure("r", "m")) == "Failure(reason='r', message='m')"
    assert hash(Failure("r", "m")) == hash(Failure(reason="r", message="m"))
    with pytest.raises(TypeError, match="unhashable"):
        hash(manifest)  # its env is a dict, as with the dataclass
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'cols'"):
        manifest.cols = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match=r"missing 7 required positional arguments: 'status', .* and 'socket_path'"):
        Manifest(version=1, session_id="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        manifest.replace(bogus=1)
    # A record's subclass adds its fields after its base's, and is never equal to the base.
    logged = LoggedEvent.from_json('{"seq":1,"time":2,"type":"output","data":"x","hide":[1,2],"echoEnd":3}')
    assert LoggedEvent.field_names()[-2:] == ("hide", "echo_end") and LoggedEvent.field_names()[:3] == ("seq", "time", "type")
    assert logged.hide == (1, 2) and logged != Event(seq=1, time=2.0, type="output", data="x")
    assert issubclass(LoggedEvent, Record)


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"version":1,"mechanism":"m","pid":4,"proof":[1]}', "ProgramRecord.proof: list matches none of dict[str, typing.Any] | None"),
        ('{"seq":1,"time":2,"type":"bogus"}', "Event.type: 'bogus' is not one of ['start', 'output'"),
        ('{"seq":1,"time":2,"type":"start","argv":["a",1]}', "Event.argv: list matches none of tuple[str, ...] | None"),
    ],
)
def test_annotations_read_without_typing_name_the_type_as_typing_did(text: str, message: str) -> None:
    from agent_tty.storage.records import ProgramRecord
    from agent_tty.storage.schema import RecordError

    kind = ProgramRecord if "mechanism" in text else Event
    with pytest.raises(RecordError) as info:
        kind.from_json(text)
    assert str(info.value).startswith(message)


def test_frozen_values_copy_and_pickle_as_a_frozen_dataclass_did() -> None:
    """copy and pickle set slots with setattr by default, which a frozen class refuses."""
    import copy
    import pickle
    from pathlib import Path

    from agent_tty.storage.home import Home, SessionPaths

    home = Home(Path("/tmp/h"))
    paths = SessionPaths("abc", Path("/tmp/h/sessions/abc"))
    for value in (home, paths, Access(1000, False, False, False, "0700")):
        assert copy.copy(value) == value and copy.deepcopy(value) == value
        assert pickle.loads(pickle.dumps(value)) == value


def test_every_record_annotation_resolves() -> None:
    """A record's annotations are read on its first parse: a form the checker cannot take
    (`Literal[...] | None` with the stand-ins) fails here rather than on a user's first read."""
    importlib.import_module("agent_tty.terminal.replay")
    classes = _subclasses(Record)
    assert len(classes) >= 8
    for cls in classes:
        assert len(cls._schema()) == len(cls.field_names()), cls


def test_a_field_declared_again_keeps_its_place() -> None:
    class Base(Record):
        one: int
        two: str | None = None

    class Sub(Base):
        three: int = 0
        one: int = 1

    assert Sub.field_names() == ("one", "two", "three") and Sub().one == 1


def test_defaults_are_given_and_factories_make_a_fresh_value_each_time() -> None:
    """The platform's values kept their dataclass defaults (docs/adr/0046)."""
    from agent_tty.platform.types import GroupRef, ProbeResult, SpawnRequest

    one, two = ProbeResult("a", True, 1, "ok"), ProbeResult("a", True, 1, "ok")
    assert one.details == {} and one.details is not two.details and one == two
    assert ProbeResult("a", True, 1, "ok", {"k": 1}).details == {"k": 1}
    request = SpawnRequest("m", ("bash",), {}, None, 80, 24)
    assert (request.session_id, request.home, request.umask) == ("", "", None)
    assert request.replace(umask=0o22).umask == 0o22 and request.umask is None
    group = GroupRef(mechanism="m", pid=1, proof=None, folder="/f")  # type: ignore[arg-type]
    assert (group.host_identity, group.session_id, group.reaped) == (None, "", None)
    assert repr(group) == "GroupRef(mechanism='m', pid=1, proof=None, folder='/f', host_identity=None, session_id='', reaped=None)"
    with pytest.raises(TypeError, match=r"missing 1 required positional argument: 'folder'"):
        GroupRef(mechanism="m", pid=1, proof=None)  # type: ignore[call-arg]
    with pytest.raises(FrozenInstanceError):
        group.pid = 2  # type: ignore[misc]
