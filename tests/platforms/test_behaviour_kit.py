"""The behavioural contract kit passes every built-in plugin usable here, and fails each
deliberately wrong plugin with the tag of the promise it breaks, leaving no process behind."""

from __future__ import annotations

import importlib
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_tty.platform.base import MechanismPlugin
from agent_tty.platform.types import (
    CapturedProgram,
    GroupRef,
    GroupVerdict,
    HostVerdict,
    ProbeResult,
    ProgramHandle,
    SpawnRequest,
)
from agent_tty.testing import check_plugin_behaviour
from agent_tty.testing.behaviour import WHEN_USABLE, _marked

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the wrong plugins delegate to linux_autogroup")

KIT_PREFIX = f"agent-tty-kit-{os.getpid()}-"
"""Every process the kit starts in this test process carries it (kit marker)."""


def _left_behind(workdir: Path) -> list[str]:
    """What the kit left running: carriers of its marker, or a fork chain whose beat file still
    changes (its members are rarely in view of one scan)."""
    beats = sorted(workdir.glob("kit-*/home/beat-*"))
    before = [b.read_bytes() for b in beats]
    found = []
    for _scan in range(5):
        found += [f"pid {p.pid}" for p in _marked(KIT_PREFIX)]
        time.sleep(0.06)
    found += [f"a fork chain writing {b}" for b, old in zip(beats, before) if b.read_bytes() != old]
    return sorted(set(found))


def _usable_builtin(name: str) -> Any:
    try:
        module = importlib.import_module(f"agent_tty_plugins.{name}")
    except ImportError as err:
        pytest.skip(f"{name} does not import here: {err}")
    probe = module.agent_tty_probe()
    if not probe.usable:
        pytest.skip(f"{name} cannot work here: {probe.reason}")
    return module


@pytest.mark.parametrize("name", ["linux_cgroup", "linux_autogroup", "macos_ps"])
def test_builtin_plugins_keep_their_promises(name: str, tmp_path: Path) -> None:
    plugin = _usable_builtin(name)
    report = check_plugin_behaviour(plugin, name, workdir=tmp_path)
    assert report.skipped == {}
    assert len(report.passed) == 1 + len(WHEN_USABLE)
    assert _left_behind(tmp_path) == []


# ---------------------------------------------------------------- deliberately wrong plugins


class Delegate(MechanismPlugin):
    """linux_autogroup under another mechanism name: right in all that a subclass leaves alone."""

    mechanism = "kit_wrong"

    def __init__(self) -> None:
        from agent_tty_plugins import linux_autogroup

        self.real = linux_autogroup
        self.real_name = linux_autogroup.MECHANISM

    def _real(self, group: GroupRef) -> GroupRef:
        return replace(group, mechanism=self.real_name)

    def probe(self) -> ProbeResult:
        real = self.real.agent_tty_probe()
        return ProbeResult(self.mechanism, real.usable, 1, real.reason)

    def spawn(self, request: SpawnRequest) -> ProgramHandle | None:
        return self.real.agent_tty_spawn(request=replace(request, mechanism=self.real_name))

    def capture_program(self, pid: int, host_pid: int) -> CapturedProgram | None:
        return self.real.agent_tty_capture_program(mechanism=self.real_name, pid=pid, host_pid=host_pid)

    def judge_group(self, group: GroupRef) -> GroupVerdict | None:
        return self.real.agent_tty_judge_group(group=self._real(group))

    def kill_group(self, group: GroupRef, signal: int) -> GroupVerdict | None:
        return self.real.agent_tty_kill_group(group=self._real(group), signal=signal)

    def group_alive(self, group: GroupRef) -> bool | None:
        return self.real.agent_tty_group_alive(group=self._real(group))

    def capture_host(self, pid: int) -> dict[str, Any] | None:
        return self.real.agent_tty_capture_host(mechanism=self.real_name, pid=pid)

    def judge_host(self, pid: int, identity: dict[str, Any] | None) -> HostVerdict:
        return self.real.agent_tty_judge_host(mechanism=self.real_name, pid=pid, identity=identity)

    def kill_host(self, pid: int, identity: dict[str, Any]) -> HostVerdict:
        return self.real.agent_tty_kill_host(mechanism=self.real_name, pid=pid, identity=identity)


class KillsWithoutProof(Delegate):
    def kill_group(self, group: GroupRef, signal: int) -> GroupVerdict | None:
        try:
            os.killpg(group.pid, signal)  # wrong: no proof read at all (R15)
        except ProcessLookupError:
            return GroupVerdict.GONE
        return GroupVerdict.OWNED


class JudgesEveryGroupGone(Delegate):
    def judge_group(self, group: GroupRef) -> GroupVerdict | None:
        return GroupVerdict.GONE

    def group_alive(self, group: GroupRef) -> bool | None:
        return False


class JudgesEveryHostDead(Delegate):
    def judge_host(self, pid: int, identity: dict[str, Any] | None) -> HostVerdict:
        return HostVerdict.DEAD


class KillsTheLeaderOnly(Delegate):
    def kill_group(self, group: GroupRef, signal: int) -> GroupVerdict | None:
        verdict = self.judge_group(group)
        if verdict is GroupVerdict.OWNED:
            try:
                os.kill(group.pid, signal)  # wrong: the leader alone, not its group
            except ProcessLookupError:
                pass
        return verdict


class NeverUsable(Delegate):
    def probe(self) -> ProbeResult:
        return ProbeResult(self.mechanism, False, 1, "needs the kit's imaginary kernel")


@pytest.fixture
def wrong_plugins_can_run() -> None:
    from agent_tty_plugins import linux_autogroup

    probe = linux_autogroup.agent_tty_probe()
    if not probe.usable:
        pytest.skip(f"the wrong plugins delegate to linux_autogroup, which cannot work here: {probe.reason}")


@pytest.mark.usefixtures("wrong_plugins_can_run")
@pytest.mark.parametrize(
    ("plugin", "tag"),
    [
        (KillsWithoutProof, "signals-without-proof"),
        (JudgesEveryGroupGone, "judges-live-group-gone"),
        (JudgesEveryHostDead, "judges-live-host-dead"),
        (KillsTheLeaderOnly, "fork-chain-survives-kill"),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else value,
)
def test_the_kit_fails_a_wrong_plugin_with_the_promise_it_breaks(plugin: type[Delegate], tag: str, tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match=rf"^\[{tag}\] ") as caught:
        check_plugin_behaviour(plugin(), Delegate.mechanism, workdir=tmp_path, timeout=3.0)
    print(f"{plugin.__name__}: {caught.value}")
    assert _left_behind(tmp_path) == []


@pytest.mark.usefixtures("wrong_plugins_can_run")
def test_the_delegate_itself_passes(tmp_path: Path) -> None:
    """The wrong plugins fail by what they override, not by the delegation."""
    report = check_plugin_behaviour(Delegate(), Delegate.mechanism, workdir=tmp_path)
    assert report.skipped == {}
    assert _left_behind(tmp_path) == []


@pytest.mark.usefixtures("wrong_plugins_can_run")
def test_an_unusable_plugin_runs_only_what_needs_no_spawn(tmp_path: Path) -> None:
    report = check_plugin_behaviour(NeverUsable(), Delegate.mechanism, workdir=tmp_path)
    assert report.passed == ["check_no_proof_no_signal"]
    assert sorted(report.skipped) == sorted(check.__name__ for check in WHEN_USABLE)
    assert all("needs the kit's imaginary kernel" in reason for reason in report.skipped.values())
    assert _left_behind(tmp_path) == []


def test_a_wrong_shape_is_tagged(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match=r"^\[shape\] the probe names"):
        check_plugin_behaviour(Delegate(), "another_name", workdir=tmp_path)


def test_the_tags_are_stable() -> None:
    """Third parties' tests match on them."""
    from agent_tty.testing import TAGS

    for tag in ("signals-without-proof", "judges-live-group-gone", "judges-live-host-dead", "fork-chain-survives-kill"):
        assert tag in TAGS
