"""The engine's one door to the platform hooks: plugin loading, probing, choice, dispatch."""

from __future__ import annotations

import errno
import json
import os
import sys
from contextlib import contextmanager

from agent_tty.platform import PROJECT
from agent_tty.platform.types import CapturedProgram, HostVerdict, ProbeResult
from agent_tty.protocol.errors import AgentTtyError, ErrorCode

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing and pluggy stay off a command that judges a host
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any

    import pluggy

    from agent_tty.platform.handle import ProgramHandle
    from agent_tty.platform.types import GroupRef, GroupVerdict, SpawnRequest

ENTRY_POINT_GROUP = "agent_tty.platform"
PIN_ENV = "AGENT_TTY_MECHANISM"
DISABLE_AUTOLOAD_ENV = "AGENT_TTY_DISABLE_PLUGIN_AUTOLOAD"
DEBUG_ENV = "AGENT_TTY_DEBUG"
"""=1: every hook call, its arguments and its answer (the verdict) go to stderr, one line each."""


def _trace(plugin: str, hook: str, kwargs: dict[str, Any], outcome: str) -> None:
    """One line per hook call under AGENT_TTY_DEBUG=1; the caller checked the variable, so an
    unset one costs a dict lookup and no import."""
    args = ", ".join(f"{key}={value!r}" for key, value in kwargs.items())
    try:
        sys.stderr.write(f"agent-tty[{os.getpid()}] hook {plugin}.{hook}({args}) -> {outcome}\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass  # no stderr (a detached host's is closed): tracing must never fail a call

# Built-in plugins, imported only where their platform matches. They are also declared as
# entry points (pyproject.toml) like any third party's; naming them here lets a command that
# handles an existing session load its plugin without scanning every installed distribution
# (~40 ms).
BUILTIN_PLUGINS: dict[str, tuple[str, tuple[str, ...]]] = {
    "linux_cgroup": ("agent_tty_plugins.linux_cgroup", ("linux",)),
    "linux_autogroup": ("agent_tty_plugins.linux_autogroup", ("linux",)),
    "macos_ps": ("agent_tty_plugins.macos_ps", ("darwin", "linux")),
    "windows_conpty": ("agent_tty_plugins.windows_conpty", ("win32",)),
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


def _argnames(function: Any) -> tuple[str, ...] | None:
    """The arguments a plain function asks for, as pluggy reads them (those without a default);
    None for anything else (a method, a callable object), which goes through pluggy."""
    code = getattr(function, "__code__", None)
    if code is None or not isinstance(function, type(_platform_matches)):
        return None
    names = code.co_varnames[: code.co_argcount]
    defaults = function.__defaults__
    return names[: len(names) - len(defaults)] if defaults else names


class Platform:
    """Loads plugins on demand and calls their hooks with typed arguments and results.

    A built-in plugin is a module of plain functions: a call that names its mechanism imports
    the module and calls the marked function itself, as pluggy's table would, without pluggy
    (loading pluggy and its inspect costs a command like list ~10 ms: ADR 0046). pluggy's
    manager is made when anything needs more than one plugin: every plugin's probe or sweep,
    the entry points, a third party's mechanism. Both ways call the same function with the
    same arguments and share the errors below."""

    def __init__(self, home: Path | None = None) -> None:
        self._manager: pluggy.PluginManager | None = None
        self._builtins: dict[str, Any] = {}
        """Built-in plugin modules imported so far, by mechanism (registered with pluggy too,
        once its manager is made)."""
        self._home = home
        self._all_loaded = False
        self._probes: list[ProbeResult] | None = None
        self.load_errors: dict[str, str] = {}
        self.sweep_errors: dict[str, str] = {}

    # ------------------------------------------------------------ loading

    @property
    def _pm(self) -> pluggy.PluginManager:
        if self._manager is None:
            import pluggy

            from agent_tty.platform import hookspecs

            self._manager = pluggy.PluginManager(PROJECT)
            self._manager.add_hookspecs(hookspecs)
            for name, module in self._builtins.items():
                self._register(name, module)
        return self._manager

    def _register(self, name: str, plugin: object) -> None:
        if self._pm.get_plugin(name) is None and not self._pm.is_registered(plugin):
            self._pm.register(plugin, name=name)
            self._pm.check_pending()

    def _load_builtin(self, name: str) -> bool:
        spec = BUILTIN_PLUGINS.get(name)
        if spec is None or not _platform_matches(spec[1]):
            return False
        if name not in self._builtins:
            __import__(spec[0])  # importlib.import_module without importing importlib's package
            module = sys.modules[spec[0]]
            if self._manager is not None:
                self._register(name, module)  # validated by pluggy as a third party's would be
            self._builtins[name] = module
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
            if self._pm.get_plugin(ep.name) is not None or ep.name in BUILTIN_PLUGINS:
                continue  # a built-in for another system stays unloaded, as above
            try:
                self._register(ep.name, ep.load())
            except Exception as err:  # noqa: BLE001 - a broken third-party plugin must not break the CLI
                self.load_errors[ep.name] = f"{type(err).__name__}: {err}"
                if self._pm.get_plugin(ep.name) is not None:
                    self._pm.unregister(name=ep.name)  # registered, then failed validation

    def _require(self, mechanism: str) -> None:
        if mechanism in self._builtins or self._load_builtin(mechanism):
            return
        if self._pm.get_plugin(mechanism) is not None:
            return
        self.load_all()
        if self._pm.get_plugin(mechanism) is None:
            raise AgentTtyError(
                ErrorCode.PLATFORM_UNAVAILABLE,
                f"the session uses the platform mechanism {mechanism!r}, which is not installed here; "
                "install the plugin that provides it (see `agent-tty doctor`)",
                mechanism=mechanism,
            )

    # ------------------------------------------------------------ probing and choice

    def probes(self) -> list[ProbeResult]:
        """Every plugin's probe, each on its own: one that raises or answers nonsense reads
        unusable with the reason, and never stops the others from being probed or chosen."""
        if self._probes is None:
            self.load_all()
            results = [self._probe(impl) for impl in self._pm.hook.agent_tty_probe.get_hookimpls()]
            if os.environ.get(DEBUG_ENV) == "1":
                for result in results:
                    _trace(result.name, "agent_tty_probe", {}, repr(result))
            self._probes = sorted(results, key=lambda r: (not r.usable, -r.rank, r.name))
        return self._probes

    @staticmethod
    def _probe(impl: Any) -> ProbeResult:
        name = impl.plugin_name
        try:
            result = impl.function()
        except Exception as err:  # noqa: BLE001 - a plugin's probe that raises reads unusable
            return ProbeResult(name, False, 0, f"its probe raised {type(err).__name__}: {err}")
        if not isinstance(result, ProbeResult):
            return ProbeResult(name, False, 0, f"its probe returned {result!r}, not a ProbeResult")
        if result.name != name:
            # Sessions record the probe's name; the core finds the plugin by the name it was
            # registered under. A mismatch would strand every session it starts.
            return ProbeResult(name, False, 0, f"its probe names {result.name!r}, but it is installed as {name!r}")
        return result

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
            if pin in self.load_errors:
                raise AgentTtyError(
                    ErrorCode.PLATFORM_UNAVAILABLE,
                    f"mechanism {pin!r} is pinned by {source} but its plugin failed to load: {self.load_errors[pin]}",
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
        if not probes:
            raise AgentTtyError(ErrorCode.PLATFORM_UNAVAILABLE, f"no platform plugin is installed for {sys.platform}")
        raise AgentTtyError(
            ErrorCode.PLATFORM_UNAVAILABLE,
            "no platform plugin can work here: " + "; ".join(f"{r.name}: {r.reason}" for r in probes),
        )

    # ------------------------------------------------------------ typed hook calls

    def _hook(self, plugin: str, name: str, /, **kwargs: Any) -> Any:
        """Call the hook `name` of the plugin registered for mechanism `plugin`, and of no
        other: a bug in one plugin never reaches another's sessions. An OSError passes through
        (callers turn it into STORAGE_ERROR with its errno); any other exception is the
        plugin's bug and reads as such, naming the plugin and the hook."""
        self._require(plugin)
        module = self._builtins.get(plugin)
        if module is not None:
            function = getattr(module, name, None)
            argnames = _argnames(function)
            options = getattr(function, PROJECT + "_impl", None)
            if argnames is not None and isinstance(options, dict) and not options.get("specname"):
                if options.get("wrapper") or options.get("hookwrapper"):
                    return None
                return self._call(plugin, name, function, argnames, kwargs)
            if function is None or options is None:
                return None  # a built-in that does not implement the hook answers nothing
        for impl in getattr(self._pm.hook, name).get_hookimpls():
            if impl.plugin_name != plugin or impl.hookwrapper or impl.wrapper:
                continue
            return self._call(plugin, name, impl.function, impl.argnames, kwargs)
        return None

    @staticmethod
    def _call(plugin: str, name: str, function: Any, argnames: tuple[str, ...], kwargs: dict[str, Any]) -> Any:
        trace = os.environ.get(DEBUG_ENV) == "1"
        try:
            result = function(*(kwargs[arg] for arg in argnames))
        except (OSError, AgentTtyError) as err:
            if trace:
                _trace(plugin, name, kwargs, f"raised {type(err).__name__}: {err}")
            raise
        except Exception as err:  # noqa: BLE001 - a plugin's bug is an INTERNAL_ERROR, never a traceback
            if trace:
                _trace(plugin, name, kwargs, f"raised {type(err).__name__}: {err}")
            raise AgentTtyError(
                ErrorCode.INTERNAL_ERROR,
                f"platform plugin {plugin!r} failed in {name}: {type(err).__name__}: {err}",
                mechanism=plugin,
                hook=name,
            ) from None
        if trace:
            _trace(plugin, name, kwargs, repr(result))
        return result

    def _answer(self, mechanism: str, value: Any, hook: str) -> Any:
        if value is None:
            raise AgentTtyError(
                ErrorCode.PLATFORM_UNAVAILABLE,
                f"plugin {mechanism!r} does not implement {hook}",
                mechanism=mechanism,
            )
        return value

    def spawn(self, request: SpawnRequest) -> ProgramHandle:
        result = self._hook(request.mechanism, "agent_tty_spawn", request=request)
        return self._answer(request.mechanism, result, "spawn")

    def capture_program(self, mechanism: str, pid: int, host_pid: int) -> CapturedProgram:
        result = self._hook(
            mechanism, "agent_tty_capture_program", mechanism=mechanism, pid=pid, host_pid=host_pid
        )
        return result if result is not None else CapturedProgram(proof=None)

    def capture_reap(self, mechanism: str, pid: int) -> dict[str, Any] | None:
        result = self._hook(mechanism, "agent_tty_capture_reap", mechanism=mechanism, pid=pid)
        return result if isinstance(result, dict) else None

    def runs_inside(self, mechanism: str, program_pid: int, host_identity: dict[str, Any] | None) -> bool:
        result = self._hook(
            mechanism,
            "agent_tty_runs_inside",
            mechanism=mechanism,
            program_pid=program_pid,
            host_identity=host_identity,
        )
        return result is None or bool(result)  # no answer: inside, the safe side

    def leave_program_group(self, mechanism: str) -> bool:
        return bool(self._hook(mechanism, "agent_tty_leave_program_group", mechanism=mechanism))

    def judge_group(self, group: GroupRef) -> GroupVerdict:
        with _system_errors("judge the program's group"):
            result = self._hook(group.mechanism, "agent_tty_judge_group", group=group)
        return self._answer(group.mechanism, result, "judge_group")

    def kill_group(self, group: GroupRef, signal: int) -> GroupVerdict:
        with _system_errors("signal the program's group"):
            result = self._hook(group.mechanism, "agent_tty_kill_group", group=group, signal=signal)
        return self._answer(group.mechanism, result, "kill_group")

    def group_alive(self, group: GroupRef) -> bool:
        with _system_errors("check the program's group"):
            result = self._hook(group.mechanism, "agent_tty_group_alive", group=group)
        return bool(self._answer(group.mechanism, result, "group_alive"))

    def release_group(self, group: GroupRef) -> bool:
        return bool(self._hook(group.mechanism, "agent_tty_release_group", group=group))

    def sweep(self, home: str, session_ids: list[str]) -> list[str]:
        """Every installed plugin's sweep, each on its own: one that raises is recorded in
        `sweep_errors` and the others still run."""
        self.load_all()
        freed: list[str] = []
        for impl in self._pm.hook.agent_tty_sweep.get_hookimpls():
            kwargs = {"home": home, "session_ids": list(session_ids)}
            try:
                result = impl.function(*(kwargs[arg] for arg in impl.argnames))
            except Exception as err:  # noqa: BLE001 - one plugin's sweep must not stop the others
                self.sweep_errors[impl.plugin_name] = f"{type(err).__name__}: {err}"
                if os.environ.get(DEBUG_ENV) == "1":
                    _trace(impl.plugin_name, "agent_tty_sweep", kwargs, f"raised {type(err).__name__}: {err}")
                continue
            if os.environ.get(DEBUG_ENV) == "1":
                _trace(impl.plugin_name, "agent_tty_sweep", kwargs, repr(result))
            freed.extend(str(item) for item in result or ())
        return freed

    def capture_host(self, mechanism: str, pid: int) -> dict[str, Any] | None:
        return self._hook(mechanism, "agent_tty_capture_host", mechanism=mechanism, pid=pid)

    def judge_host(self, mechanism: str, pid: int, identity: dict[str, Any] | None) -> HostVerdict:
        result = self._hook(
            mechanism, "agent_tty_judge_host", mechanism=mechanism, pid=pid, identity=identity
        )
        return result if result is not None else HostVerdict.UNKNOWN

    def kill_host(self, mechanism: str, pid: int, identity: dict[str, Any]) -> HostVerdict:
        result = self._hook(
            mechanism, "agent_tty_kill_host", mechanism=mechanism, pid=pid, identity=identity
        )
        return result if result is not None else HostVerdict.UNKNOWN
