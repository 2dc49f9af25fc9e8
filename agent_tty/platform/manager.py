"""The engine's one door to the platform hooks: plugin loading, probing, choice, dispatch."""

from __future__ import annotations

import errno
import importlib
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pluggy

from agent_tty.platform import hookspecs
from agent_tty.platform.types import (
    CapturedProgram,
    GroupRef,
    GroupVerdict,
    HostVerdict,
    ProbeResult,
    ProgramHandle,
    SpawnRequest,
)
from agent_tty.protocol.errors import AgentTtyError, ErrorCode

ENTRY_POINT_GROUP = "agent_tty.platform"
PIN_ENV = "AGENT_TTY_MECHANISM"
DISABLE_AUTOLOAD_ENV = "AGENT_TTY_DISABLE_PLUGIN_AUTOLOAD"

# Built-in plugins, imported only where their platform matches. They are also declared as
# entry points (pyproject.toml) like any third party's; naming them here lets a command that
# handles an existing session load its plugin without scanning every installed distribution
# (~40 ms).
BUILTIN_PLUGINS: dict[str, tuple[str, tuple[str, ...]]] = {
    "linux_cgroup": ("agent_tty_plugins.linux_cgroup", ("linux",)),
    "linux_autogroup": ("agent_tty_plugins.linux_autogroup", ("linux",)),
}


def _platform_matches(platforms: tuple[str, ...]) -> bool:
    return any(sys.platform.startswith(p) for p in platforms)


@contextmanager
def _system_errors(what: str) -> Iterator[None]:
    """A plugin's OSError (a /proc scan that fails with EIO, say) becomes our STORAGE_ERROR with
    its errno: the engine tells a failure a retry does not change by it (UNREADABLE_ERRNOS)."""
    try:
        yield
    except OSError as err:
        code = errno.errorcode.get(err.errno or 0)
        raise AgentTtyError(ErrorCode.STORAGE_ERROR, f"cannot {what}: {err.strerror or err}", errno=code) from None


class Platform:
    """Loads plugins on demand and calls their hooks with typed arguments and results."""

    def __init__(self, home: Path | None = None) -> None:
        self._pm = pluggy.PluginManager("agent_tty")
        self._pm.add_hookspecs(hookspecs)
        self._home = home
        self._all_loaded = False
        self._probes: list[ProbeResult] | None = None
        self.load_errors: dict[str, str] = {}

    # ------------------------------------------------------------ loading

    def _register(self, name: str, plugin: object) -> None:
        if self._pm.get_plugin(name) is None and not self._pm.is_registered(plugin):
            self._pm.register(plugin, name=name)
            self._pm.check_pending()

    def _load_builtin(self, name: str) -> bool:
        spec = BUILTIN_PLUGINS.get(name)
        if spec is None or not _platform_matches(spec[1]):
            return False
        if self._pm.get_plugin(name) is None:
            self._register(name, importlib.import_module(spec[0]))
        return True

    def load_all(self) -> None:
        """Built-ins for this platform, then every entry point (unless autoload is off)."""
        if self._all_loaded:
            return
        self._all_loaded = True
        for name in BUILTIN_PLUGINS:
            self._load_builtin(name)
        if os.environ.get(DISABLE_AUTOLOAD_ENV):
            return
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if self._pm.get_plugin(ep.name) is not None:
                continue
            try:
                self._register(ep.name, ep.load())
            except Exception as err:  # a broken third-party plugin must not break the CLI
                self.load_errors[ep.name] = f"{type(err).__name__}: {err}"

    def _require(self, mechanism: str) -> None:
        if self._pm.get_plugin(mechanism) is not None or self._load_builtin(mechanism):
            return
        self.load_all()
        if self._pm.get_plugin(mechanism) is None:
            raise AgentTtyError(
                ErrorCode.PLATFORM_UNAVAILABLE,
                f"the session uses the platform mechanism {mechanism!r}, which is not installed here; "
                "install the plugin that provides it (see `agent-tty doctor`)",
                mechanism=mechanism,
            )

    def plugin_names(self) -> list[str]:
        self.load_all()
        return sorted(name for name, _ in self._pm.list_name_plugin())

    # ------------------------------------------------------------ probing and choice

    def probes(self) -> list[ProbeResult]:
        if self._probes is None:
            self.load_all()
            results: list[ProbeResult] = []
            for result in self._pm.hook.agent_tty_probe():
                results.append(result)
            self._probes = sorted(results, key=lambda r: (not r.usable, -r.rank, r.name))
        return self._probes

    def pinned(self) -> tuple[str | None, str | None]:
        """The mechanism an operator pinned, and where: the environment, then the Home's config."""
        value = os.environ.get(PIN_ENV)
        if value:
            return value, PIN_ENV
        if self._home is not None:
            config = self._home / "config.json"
            try:
                from agent_tty.storage.files import read_bytes

                data = json.loads(read_bytes(config))
            except FileNotFoundError:
                return None, None
            except (OSError, ValueError) as err:
                raise AgentTtyError(
                    ErrorCode.STORAGE_ERROR, f"cannot read {config}: {err}", path=str(config)
                ) from None
            mechanism = data.get("mechanism") if isinstance(data, dict) else None
            if mechanism is not None and not isinstance(mechanism, str):
                raise AgentTtyError(
                    ErrorCode.STORAGE_ERROR, f"{config}: 'mechanism' must be a string", path=str(config)
                )
            if mechanism:
                return mechanism, str(config)
        return None, None

    def choose(self) -> ProbeResult:
        """The mechanism new sessions get: the pinned one (which must probe usable), else the best."""
        probes = self.probes()
        pin, source = self.pinned()
        if pin:
            for result in probes:
                if result.name == pin:
                    if result.usable:
                        return result
                    raise AgentTtyError(
                        ErrorCode.PLATFORM_UNAVAILABLE,
                        f"mechanism {pin!r} is pinned by {source} but cannot work here: {result.reason}",
                        mechanism=pin,
                        pinnedBy=source,
                    )
            raise AgentTtyError(
                ErrorCode.PLATFORM_UNAVAILABLE,
                f"mechanism {pin!r} is pinned by {source} but no installed plugin provides it",
                mechanism=pin,
                pinnedBy=source,
                installed=[r.name for r in probes],
            )
        for result in probes:
            if result.usable:
                return result
        raise AgentTtyError(
            ErrorCode.PLATFORM_UNAVAILABLE,
            "no platform plugin can work here: " + "; ".join(f"{r.name}: {r.reason}" for r in probes),
        )

    # ------------------------------------------------------------ typed hook calls

    def _answer(self, mechanism: str, value: Any, hook: str) -> Any:
        if value is None:
            raise AgentTtyError(
                ErrorCode.PLATFORM_UNAVAILABLE,
                f"plugin {mechanism!r} does not implement {hook}",
                mechanism=mechanism,
            )
        return value

    def spawn(self, request: SpawnRequest) -> ProgramHandle:
        self._require(request.mechanism)
        result = self._pm.hook.agent_tty_spawn(request=request)
        return self._answer(request.mechanism, result, "spawn")

    def capture_program(self, mechanism: str, pid: int, host_pid: int) -> CapturedProgram:
        self._require(mechanism)
        result = self._pm.hook.agent_tty_capture_program(mechanism=mechanism, pid=pid, host_pid=host_pid)
        return result if result is not None else CapturedProgram(proof=None)

    def runs_inside(self, mechanism: str, program_pid: int, host_identity: dict[str, Any] | None) -> bool:
        self._require(mechanism)
        result = self._pm.hook.agent_tty_runs_inside(
            mechanism=mechanism, program_pid=program_pid, host_identity=host_identity
        )
        return bool(result)

    def leave_program_group(self, mechanism: str) -> bool:
        self._require(mechanism)
        return bool(self._pm.hook.agent_tty_leave_program_group(mechanism=mechanism))

    def judge_group(self, group: GroupRef) -> GroupVerdict:
        self._require(group.mechanism)
        with _system_errors("judge the program's group"):
            result = self._pm.hook.agent_tty_judge_group(group=group)
        return self._answer(group.mechanism, result, "judge_group")

    def kill_group(self, group: GroupRef, signal: int) -> GroupVerdict:
        self._require(group.mechanism)
        with _system_errors("signal the program's group"):
            result = self._pm.hook.agent_tty_kill_group(group=group, signal=signal)
        return self._answer(group.mechanism, result, "kill_group")

    def group_alive(self, group: GroupRef) -> bool:
        self._require(group.mechanism)
        with _system_errors("check the program's group"):
            result = self._pm.hook.agent_tty_group_alive(group=group)
        return bool(self._answer(group.mechanism, result, "group_alive"))

    def release_group(self, group: GroupRef) -> bool:
        self._require(group.mechanism)
        return bool(self._pm.hook.agent_tty_release_group(group=group))

    def sweep(self, home: str, session_ids: list[str]) -> list[str]:
        freed: list[str] = []
        for result in self._pm.hook.agent_tty_sweep(home=home, session_ids=session_ids):
            freed.extend(result)
        return freed

    def capture_host(self, mechanism: str, pid: int) -> dict[str, Any] | None:
        self._require(mechanism)
        return self._pm.hook.agent_tty_capture_host(mechanism=mechanism, pid=pid)

    def judge_host(self, mechanism: str, pid: int, identity: dict[str, Any] | None) -> HostVerdict:
        self._require(mechanism)
        result = self._pm.hook.agent_tty_judge_host(mechanism=mechanism, pid=pid, identity=identity)
        return result if result is not None else HostVerdict.UNKNOWN

    def kill_host(self, mechanism: str, pid: int, identity: dict[str, Any]) -> HostVerdict:
        self._require(mechanism)
        result = self._pm.hook.agent_tty_kill_host(mechanism=mechanism, pid=pid, identity=identity)
        return result if result is not None else HostVerdict.UNKNOWN
