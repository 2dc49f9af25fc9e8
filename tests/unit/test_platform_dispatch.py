"""The manager calls a built-in plugin's hook itself, without pluggy (docs/adr/0046): the marker
is pluggy's, the function and arguments are the ones pluggy's table holds, and the answers and
errors are the same either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pluggy
import pytest

from agent_tty.platform import PROJECT, hookimpl, hookspecs
from agent_tty.platform.manager import BUILTIN_PLUGINS, Platform, _argnames, _platform_matches
from agent_tty.platform.types import HostVerdict
from agent_tty.protocol.errors import AgentTtyError, ErrorCode

OPTIONS = [{}, {"tryfirst": True}, {"trylast": True}, {"optionalhook": True}, {"wrapper": True}, {"hookwrapper": True}, {"specname": "agent_tty_probe"}]


@pytest.mark.parametrize("options", OPTIONS)
def test_the_marker_is_pluggys(options: dict[str, object]) -> None:
    def ours() -> None: ...

    def theirs() -> None: ...

    hookimpl(**options)(ours)
    pluggy.HookimplMarker(PROJECT)(**options)(theirs)
    assert getattr(ours, PROJECT + "_impl") == getattr(theirs, PROJECT + "_impl")
    bare = hookimpl(theirs)
    assert bare is theirs


def _builtins_here() -> list[str]:
    return [name for name, (_module, platforms) in BUILTIN_PLUGINS.items() if _platform_matches(platforms)]


@pytest.mark.parametrize("name", _builtins_here())
def test_each_builtin_is_what_pluggys_table_holds(name: str) -> None:
    """Registered with pluggy (which validates it against the hookspecs), every hook pluggy finds
    is the module's function of the hook's name, asking for the same arguments, with no option
    that the direct call would ignore."""
    module = sys.modules.get(BUILTIN_PLUGINS[name][0]) or __import__(BUILTIN_PLUGINS[name][0], fromlist=["_"])
    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.register(module, name=name)
    manager.check_pending()
    found = 0
    for hook_name in dir(manager.hook):
        if not hook_name.startswith("agent_tty_"):
            continue
        for impl in getattr(manager.hook, hook_name).get_hookimpls():
            found += 1
            assert getattr(module, hook_name) is impl.function, (name, hook_name)
            assert _argnames(impl.function) == tuple(impl.argnames), (name, hook_name)
            options = getattr(impl.function, PROJECT + "_impl")
            assert not (options["wrapper"] or options["hookwrapper"] or options["specname"]), (name, hook_name)
    assert found >= 10, name


def test_a_host_is_judged_alike_with_and_without_pluggy() -> None:
    mechanism = next(n for n in ("linux_cgroup", "linux_autogroup", "macos_ps", "windows_conpty") if n in _builtins_here())
    direct = Platform()
    identity = direct.capture_host(mechanism, os.getpid())
    assert direct._manager is None  # answered without pluggy
    through_pluggy = Platform()
    through_pluggy.load_all()
    assert through_pluggy._manager is not None
    for pid, ident in ((os.getpid(), identity), (os.getpid(), None), (2**22 + 7, None)):
        assert direct.judge_host(mechanism, pid, ident) == through_pluggy.judge_host(mechanism, pid, ident), pid
    assert direct.judge_host(mechanism, os.getpid(), identity) is HostVerdict.ALIVE
    assert direct._manager is None


def test_judging_a_host_imports_no_pluggy() -> None:
    code = (
        "import json, os, sys\n"
        "from agent_tty.platform.manager import BUILTIN_PLUGINS, Platform, _platform_matches\n"
        "name = next(n for n in ('linux_cgroup', 'linux_autogroup', 'macos_ps', 'windows_conpty') if _platform_matches(BUILTIN_PLUGINS[n][1]))\n"
        "p = Platform()\n"
        "print(json.dumps([p.judge_host(name, os.getpid(), p.capture_host(name, os.getpid())).value, sorted(sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    verdict, modules = json.loads(done.stdout)
    assert verdict == "alive"
    assert not any(m == "pluggy" or m.startswith("pluggy.") for m in modules)
    assert "agent_tty.platform.hookspecs" not in modules


def test_a_builtins_bug_reads_as_its_bug_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hook that raises is INTERNAL_ERROR naming the plugin and the hook, an OSError passes
    through, and a hook the built-in lacks answers None, on both paths."""
    module = types.ModuleType("agent_tty_test_broken_builtin")

    @hookimpl
    def agent_tty_judge_host(mechanism: str, pid: int, identity: object) -> object:
        if pid == 1:
            raise OSError(5, "Input/output error")
        raise ValueError("boom")

    @hookimpl
    def agent_tty_probe() -> object:
        from agent_tty.platform.types import ProbeResult

        return ProbeResult("broken", False, 0, "a test plugin")

    module.agent_tty_judge_host = agent_tty_judge_host  # type: ignore[attr-defined]
    module.agent_tty_probe = agent_tty_probe  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(BUILTIN_PLUGINS, "broken", (module.__name__, (sys.platform,)))
    for through_pluggy in (False, True):
        platform = Platform()
        if through_pluggy:
            platform.load_all()
        with pytest.raises(AgentTtyError) as caught:
            platform.judge_host("broken", 2, None)
        assert caught.value.code is ErrorCode.INTERNAL_ERROR
        assert "'broken' failed in agent_tty_judge_host: ValueError: boom" in caught.value.message
        with pytest.raises(OSError):
            platform.judge_host("broken", 1, None)
        assert platform.kill_host("broken", 2, {}) is HostVerdict.UNKNOWN  # not implemented: no answer
        assert (platform._manager is not None) is through_pluggy
