"""The host's shutdown machine keeps to its transition table: every state its code enters is
in the table, an illegal transition raises, and a shutdown the table does not allow is ignored
(a SIGTERM during a destroy writes nothing and kills nothing more)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agent_tty.host import shutdown
from agent_tty.host.shutdown import ENDS_AS, TRANSITIONS, IllegalTransition, Reason, Shutdown, State
from agent_tty.platform.types import GroupRef, ProgramExit, Stop
from agent_tty.protocol.status import Status

HOST = Path(shutdown.__file__).resolve().parent


def _entered_states() -> set[str]:
    """Every `State.X` that the host's code hands to `_enter`, or that a reason leads to."""
    entered: set[str] = set()
    for path in (HOST / "shutdown.py", HOST / "loop.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("_enter", "may"):
                (arg,) = node.args
                if ast.unparse(arg) in ("state", "ENDS_AS[reason]"):
                    continue  # inside the machine: `_enter` itself, and a reason's state (below)
                assert isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "State", ast.unparse(node)
                entered.add(arg.attr)
    return entered | {state.name for state in ENDS_AS.values()}


def test_every_state_the_code_enters_is_in_the_table() -> None:
    assert set(TRANSITIONS) == set(State)
    reachable = {state for targets in TRANSITIONS.values() for state in targets}
    entered = _entered_states()
    assert entered, "no _enter call found: the scan no longer sees the machine"
    for name in entered:
        assert State[name] in reachable, name
    assert set(ENDS_AS) == set(Reason)


def test_only_enter_assigns_the_state() -> None:
    tree = ast.parse((HOST / "shutdown.py").read_text())
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in ast.walk(function):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr == "state":
                    assert function.name in ("__init__", "_enter"), function.name
    loop = ast.parse((HOST / "loop.py").read_text())
    for node in ast.walk(loop):
        if isinstance(node, ast.Assign):
            assert not any(ast.unparse(t).endswith("shutdown.state") for t in node.targets)


def test_the_reasons_keep_their_words() -> None:
    # str-valued: the same words as the strings they replaced (logs, and main.py's calls).
    assert [reason.value for reason in Reason] == ["destroy", "sigterm", "create-failed", "idle", "folder-gone"]
    assert Reason.CREATE_FAILED == "create-failed"


# ------------------------------------------------------------------ a machine on fakes


@dataclass
class FakeManifest:
    status: Status = Status.RUNNING
    log_incomplete: Any = None


@dataclass
class FakeWriter:
    current: FakeManifest = field(default_factory=FakeManifest)
    writes: list[dict[str, Any]] = field(default_factory=list)

    def write(self, **changes: Any) -> None:
        self.writes.append(changes)
        if "status" in changes:
            self.current.status = changes["status"]


@dataclass
class FakeEvents:
    lost: Any = None
    failing: bool = False
    appended: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def append(self, kind: str, **fields: Any) -> int:
        self.appended.append((kind, fields))
        return len(self.appended)


@dataclass
class FakePlatform:
    kills: list[int] = field(default_factory=list)
    alive: bool = True

    def kill_group(self, _group: GroupRef, signal: int) -> None:
        self.kills.append(signal)

    def group_alive(self, _group: GroupRef) -> bool:
        return self.alive


@dataclass
class FakeHost:
    exit: ProgramExit | None = None
    group: GroupRef = field(default_factory=lambda: GroupRef(mechanism="fake", pid=4242, proof=None, folder=Path("/nonexistent")))
    timers: list[tuple[float, Callable[[], None]]] = field(default_factory=list)
    cancelled: set[int] = field(default_factory=set)
    serving: bool = True

    def after(self, delay: float, callback: Callable[[], None]) -> int:
        self.timers.append((delay, callback))
        return len(self.timers) - 1

    def cancel(self, timer: int) -> None:
        self.cancelled.add(timer)

    def stop_serving(self) -> None:
        self.serving = False


def _machine() -> tuple[Shutdown, FakeHost, FakeWriter, FakePlatform, FakeEvents]:
    host, writer, platform, events = FakeHost(), FakeWriter(), FakePlatform(), FakeEvents()
    machine = Shutdown(host, platform, writer, events, Path("/nonexistent/destroyed"))  # type: ignore[arg-type]
    return machine, host, writer, platform, events


def test_a_destroy_writes_destroying_then_hangs_up() -> None:
    machine, host, writer, platform, _events = _machine()
    machine.begin(Reason.DESTROY)
    assert machine.state is State.DESTROYING
    assert writer.writes == [{"status": Status.DESTROYING}]
    assert platform.kills == [Stop.HANGUP]
    assert [delay for delay, _ in host.timers] == [shutdown.SHUTDOWN_KILL_GRACE_S]


def test_a_sigterm_during_a_destroy_is_ignored() -> None:
    machine, host, writer, platform, _events = _machine()
    machine.begin(Reason.DESTROY)
    machine.begin(Reason.SIGTERM)
    machine.begin(Reason.IDLE)
    assert machine.state is State.DESTROYING
    assert len(writer.writes) == 1 and platform.kills == [Stop.HANGUP] and len(host.timers) == 1


def test_a_destroy_outranks_the_idle_hang_up() -> None:
    machine, host, writer, platform, _events = _machine()
    machine.begin(Reason.IDLE)
    assert machine.state is State.IDLE and writer.writes == [] and platform.kills == [Stop.HANGUP]
    machine.begin(Reason.DESTROY)
    assert machine.state is State.DESTROYING
    assert writer.writes == [{"status": Status.DESTROYING}]
    assert platform.kills == [Stop.HANGUP]  # the idle hang-up and its kill timer are on their way
    assert len(host.timers) == 1


@pytest.mark.parametrize("before", [State.DESTROYING, State.FOLDER_GONE])
@pytest.mark.parametrize("after", list(State))
def test_an_illegal_transition_raises(before: State, after: State) -> None:
    machine, *_ = _machine()
    machine.state = before
    with pytest.raises(IllegalTransition):
        machine._enter(after)
    assert machine.state is before


def test_nothing_returns_to_serving() -> None:
    for state in State:
        machine, *_ = _machine()
        machine.state = state
        with pytest.raises(IllegalTransition):
            machine._enter(State.SERVING)


def test_a_removed_folder_after_a_destroy_is_illegal_and_the_host_checks_first() -> None:
    machine, host, _writer, _platform, events = _machine()
    machine.begin(Reason.DESTROY)
    assert not machine.may(State.FOLDER_GONE)  # Host._check_folder asks this before folder_gone
    with pytest.raises(IllegalTransition):
        machine.folder_gone()
    assert host.serving


def test_a_removed_folder_writes_nothing_and_kills_at_once() -> None:
    machine, host, writer, platform, events = _machine()
    machine.folder_gone()
    assert machine.state is State.FOLDER_GONE and not host.serving
    assert platform.kills == [Stop.KILL]
    assert events.appended == [("signal", {"signal": "SIGKILL", "label": "folder-gone"})]
    assert machine.write(status=Status.EXITED) is False and writer.writes == []
    machine.begin(Reason.DESTROY)  # ignored: the table has no way out of FOLDER_GONE
    assert writer.writes == [] and machine.state is State.FOLDER_GONE


def test_the_exit_after_a_destroy_kills_and_waits_then_records_destroyed(tmp_path: Path) -> None:
    machine, host, writer, platform, _events = _machine()
    machine.destroyed_marker = tmp_path / "destroyed"
    machine.begin(Reason.DESTROY)
    host.exit = ProgramExit(exit_code=0, exit_signal=None)
    platform.alive = False
    machine.on_exit()
    assert 0 in host.cancelled  # the kill timer
    assert platform.kills == [Stop.HANGUP, Stop.KILL]
    assert (tmp_path / "destroyed").exists() and machine.ended
    assert writer.writes[-1]["status"] is Status.DESTROYED and writer.writes[-1]["exit_code"] == 0
