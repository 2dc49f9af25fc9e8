"""A base for platform plugins: answer "not my mechanism" once, implement only what you mean.

    from agent_tty.platform.base import MechanismPlugin

    class MyPlugin(MechanismPlugin):
        mechanism = "my_mechanism"

        def probe(self) -> ProbeResult: ...
        def judge_group(self, group: GroupRef) -> GroupVerdict: ...
        ...

    plugin = MyPlugin()   # the entry point names this object: "my_package.plugin:plugin"

Each `agent_tty_*` hook below checks the mechanism the call names and, for this plugin's own,
calls the plain method of the same name without the prefix. A method left as it is here either
answers the safe default (said on each) or returns None, which the core reports as "plugin
does not implement ..." to the user: a plugin that cannot judge a group must not pretend to.
docs/plugins.md says what each method must prove.
"""

from __future__ import annotations

from typing import Any

from agent_tty.platform import hookimpl
from agent_tty.platform.types import (
    CapturedProgram,
    GroupRef,
    GroupVerdict,
    HostVerdict,
    ProbeResult,
    ProgramHandle,
    SpawnRequest,
)


class MechanismPlugin:
    """Subclass, set `mechanism`, and override the methods your platform can do."""

    mechanism: str = ""

    def _ours(self, mechanism: str) -> bool:
        return bool(self.mechanism) and mechanism == self.mechanism

    # ------------------------------------------------------------ what a plugin implements

    def probe(self) -> ProbeResult:
        return ProbeResult(self.mechanism, False, 0, "probe() is not implemented")

    def spawn(self, request: SpawnRequest) -> ProgramHandle | None:
        return None

    def capture_program(self, pid: int, host_pid: int) -> CapturedProgram | None:
        """Default: no proof. Your judge_group then has nothing to prove the group by and
        must not read it OWNED from a pid alone (the kit's [signals-without-proof])."""
        return CapturedProgram(proof=None)

    def capture_reap(self, pid: int) -> dict[str, Any] | None:
        """Default: nothing; your judge_group then gets `reaped=None` on every GroupRef."""
        return None

    def runs_inside(self, program_pid: int, host_identity: dict[str, Any] | None) -> bool:
        """Default: inside. A needless re-run of destroy costs one process; a wrong "outside"
        lets a destroy die in its own kill."""
        return True

    def leave_program_group(self) -> bool:
        return True

    def judge_group(self, group: GroupRef) -> GroupVerdict | None:
        return None

    def kill_group(self, group: GroupRef, signal: int) -> GroupVerdict | None:
        return None

    def group_alive(self, group: GroupRef) -> bool | None:
        """Default: from judge_group. Alive unless the judgement proves the group gone or
        someone else's; an unknown answer reads alive, so no wait passes on a guess. Override
        it when judge_group can miss members a scan does not see (a fork chain between two
        reads): a wait must not pass while one runs (the kit's [judges-ended-group-live] and
        [fork-chain-survives-kill] look at this)."""
        verdict = self.judge_group(group)
        if verdict is None:
            return None
        return verdict not in (GroupVerdict.GONE, GroupVerdict.UNPROVEN)

    def release_group(self, group: GroupRef) -> bool:
        return True

    def sweep(self, home: str, session_ids: list[str]) -> list[str]:
        return []

    def capture_host(self, pid: int) -> dict[str, Any] | None:
        return None

    def judge_host(self, pid: int, identity: dict[str, Any] | None) -> HostVerdict:
        """Default: unknown, which never lets the core treat a host as dead."""
        return HostVerdict.UNKNOWN

    def kill_host(self, pid: int, identity: dict[str, Any]) -> HostVerdict:
        """Default: unknown, which signals nothing."""
        return HostVerdict.UNKNOWN

    # ------------------------------------------------------------ the hooks pluggy sees

    @hookimpl
    def agent_tty_probe(self) -> ProbeResult:
        return self.probe()

    @hookimpl
    def agent_tty_spawn(self, request: SpawnRequest) -> ProgramHandle | None:
        return self.spawn(request) if self._ours(request.mechanism) else None

    @hookimpl
    def agent_tty_capture_program(self, mechanism: str, pid: int, host_pid: int) -> CapturedProgram | None:
        return self.capture_program(pid, host_pid) if self._ours(mechanism) else None

    @hookimpl
    def agent_tty_capture_reap(self, mechanism: str, pid: int) -> dict[str, Any] | None:
        return self.capture_reap(pid) if self._ours(mechanism) else None

    @hookimpl
    def agent_tty_runs_inside(
        self, mechanism: str, program_pid: int, host_identity: dict[str, Any] | None
    ) -> bool | None:
        return self.runs_inside(program_pid, host_identity) if self._ours(mechanism) else None

    @hookimpl
    def agent_tty_leave_program_group(self, mechanism: str) -> bool | None:
        return self.leave_program_group() if self._ours(mechanism) else None

    @hookimpl
    def agent_tty_judge_group(self, group: GroupRef) -> GroupVerdict | None:
        return self.judge_group(group) if self._ours(group.mechanism) else None

    @hookimpl
    def agent_tty_kill_group(self, group: GroupRef, signal: int) -> GroupVerdict | None:
        return self.kill_group(group, signal) if self._ours(group.mechanism) else None

    @hookimpl
    def agent_tty_group_alive(self, group: GroupRef) -> bool | None:
        return self.group_alive(group) if self._ours(group.mechanism) else None

    @hookimpl
    def agent_tty_release_group(self, group: GroupRef) -> bool | None:
        return self.release_group(group) if self._ours(group.mechanism) else None

    @hookimpl
    def agent_tty_sweep(self, home: str, session_ids: list[str]) -> list[str]:
        return self.sweep(home, session_ids)

    @hookimpl
    def agent_tty_capture_host(self, mechanism: str, pid: int) -> dict[str, Any] | None:
        return self.capture_host(pid) if self._ours(mechanism) else None

    @hookimpl
    def agent_tty_judge_host(self, mechanism: str, pid: int, identity: dict[str, Any] | None) -> HostVerdict | None:
        return self.judge_host(pid, identity) if self._ours(mechanism) else None

    @hookimpl
    def agent_tty_kill_host(self, mechanism: str, pid: int, identity: dict[str, Any]) -> HostVerdict | None:
        return self.kill_host(pid, identity) if self._ours(mechanism) else None
