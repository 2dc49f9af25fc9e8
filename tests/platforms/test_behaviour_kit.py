"""The behavioural contract kit passes every built-in plugin usable here, and fails each
deliberately wrong plugin with the tag of the promise it breaks, leaving no process behind."""

from __future__ import annotations

import importlib
import os
import sys
import time
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
        return group.replace(mechanism=self.real_name)

    def probe(self) -> ProbeResult:
        real = self.real.agent_tty_probe()
        return ProbeResult(self.mechanism, real.usable, 1, real.reason)

    def spawn(self, request: SpawnRequest) -> ProgramHandle | None:
        return self.real.agent_tty_spawn(request=request.replace(mechanism=self.real_name))

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


class SignalsWithoutProofUnlessKill(Delegate):
    """Proves the group for SIGKILL only: the shutdown's SIGHUP, the `signal` command's SIGINT
    and SIGTERM go to the recorded id unproven (R15)."""

    def kill_group(self, group: GroupRef, signal: int) -> GroupVerdict | None:
        if signal == 9:
            return super().kill_group(group, signal)
        try:
            os.killpg(group.pid, signal)  # wrong: no proof read for the other signals
        except ProcessLookupError:
            return GroupVerdict.GONE
        return GroupVerdict.OWNED


class ListScan(Delegate):
    """Right, but judging by a listing of /proc alone (no read of the pids handed out last, as
    linux_autogroup does): a fork chain that forks at once is out of its view, so it must freeze
    the group to see it (as the example plugin does)."""

    def _list_judge(self, group: GroupRef) -> tuple[GroupVerdict, Any]:
        from agent_tty_plugins._posix import procfs

        proof = group.proof or {}
        token = proof.get("autogroup")
        if token is None or proof.get("bootId") != procfs.boot_id():
            return GroupVerdict.UNKNOWN, None  # never ours without the whole proof
        try:
            leader = procfs.read_stat(group.pid)
        except PermissionError:
            return GroupVerdict.UNKNOWN, None
        if leader is not None and leader.start_time != proof.get("startTime"):
            return GroupVerdict.UNPROVEN, None
        for _scan in range(2):
            for member in procfs.scan_group(group.pid).members:
                if not procfs.is_live_state(member.state) or member.session != group.pid:
                    continue
                try:
                    if procfs.read_autogroup(member.pid) == token and procfs.read_real_uid(member.pid) == os.geteuid():
                        return GroupVerdict.OWNED, member
                except OSError:
                    return GroupVerdict.UNKNOWN, None
        return GroupVerdict.GONE, None

    def judge_group(self, group: GroupRef) -> GroupVerdict | None:
        return self._list_judge(group)[0]

    def _signal_if_owned(self, group: GroupRef, signal: int) -> GroupVerdict:
        from agent_tty_plugins._posix import groups

        verdict = self._list_judge(group)[0]
        if verdict is GroupVerdict.OWNED:
            groups.signal_group(group.pid, signal)
        return verdict

    def kill_group(self, group: GroupRef, signal: int) -> GroupVerdict | None:
        from agent_tty_plugins._posix import groups

        verdict = self._signal_if_owned(group, signal)
        if verdict is GroupVerdict.GONE and signal == 9 and groups.probe_group(group.pid) is groups.Probe.FOUND:
            groups.signal_group(group.pid, 19)  # SIGSTOP: stopped members stay in view
            try:
                verdict = self._signal_if_owned(group, signal)
            finally:
                groups.signal_group(group.pid, 18)  # SIGCONT
        return verdict


class NoFreeze(ListScan):
    """Kills what its scan shows, and never stops the group to look again."""

    def kill_group(self, group: GroupRef, signal: int) -> GroupVerdict | None:
        return self._signal_if_owned(group, signal)


class AliveByOneJudgement(ListScan):
    """group_alive from one judge_group (MechanismPlugin's default), which misses a chain."""

    def group_alive(self, group: GroupRef) -> bool | None:
        return MechanismPlugin.group_alive(self, group)


class RunsInsideNever(Delegate):
    def runs_inside(self, program_pid: int, host_identity: dict[str, Any] | None) -> bool:
        return False  # wrong: a destroy the program runs would die in its own kill


class ProbeRaises(Delegate):
    def probe(self) -> ProbeResult:
        raise RuntimeError("the kit's imaginary library is missing")


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
        (KillsTheLeaderOnly, "(?:unseen-chain|fork-chain)-survives-kill"),  # the unseen chain runs first
        (SignalsWithoutProofUnlessKill, "signals-without-proof"),
        (NoFreeze, "unseen-chain-survives-kill"),
        (AliveByOneJudgement, "alive-trusts-one-judgement"),
        (RunsInsideNever, "runs-inside-says-outside"),
        (ProbeRaises, "probe-raises"),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else value,
)
def test_the_kit_fails_a_wrong_plugin_with_the_promise_it_breaks(plugin: type[Delegate], tag: str, tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match=rf"^\[{tag}\] ") as caught:
        check_plugin_behaviour(plugin(), Delegate.mechanism, workdir=tmp_path, timeout=3.0)
    print(f"{plugin.__name__}: {caught.value}")
    assert _left_behind(tmp_path) == []


@pytest.mark.usefixtures("wrong_plugins_can_run")
@pytest.mark.parametrize("plugin", [Delegate, ListScan], ids=lambda value: value.__name__)
def test_the_delegate_itself_passes(plugin: type[Delegate], tmp_path: Path) -> None:
    """The wrong plugins fail by what they override, not by the delegation (nor, for NoFreeze
    and AliveByOneJudgement, by judging from a listing of /proc alone)."""
    report = check_plugin_behaviour(plugin(), Delegate.mechanism, workdir=tmp_path)
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
