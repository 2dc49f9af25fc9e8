"""Contract checks for platform plugins: run them against yours in your own tests.

    from agent_tty.platform.contract import check_plugin

    def test_my_plugin_keeps_the_contract():
        check_plugin(my_package.my_plugin, mechanism="my_mechanism")

Each check calls the plugin's hooks directly, the way the manager would, and raises
AssertionError with the broken promise. It starts no program and signals nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_tty.platform.types import GroupRef, ProbeResult, SpawnRequest

FOREIGN = "agent-tty-contract-foreign-mechanism"


def check_plugin(plugin: Any, mechanism: str) -> ProbeResult:
    """Validate the hook names, the probe, and that every hook ignores a foreign mechanism."""
    import pluggy

    from agent_tty.platform import hookspecs

    manager = pluggy.PluginManager("agent_tty")
    manager.add_hookspecs(hookspecs)
    manager.register(plugin, name=mechanism)
    manager.check_pending()  # every agent_tty_* function must match a hookspec

    probe = getattr(plugin, "agent_tty_probe", None)
    assert probe is not None, "a plugin must implement agent_tty_probe"
    result = probe()
    assert isinstance(result, ProbeResult), f"agent_tty_probe returned {result!r}"
    assert result.name == mechanism, f"the probe names {result.name!r}, the entry point {mechanism!r}"
    assert isinstance(result.usable, bool) and isinstance(result.rank, int) and result.reason

    group = GroupRef(mechanism=FOREIGN, pid=2**22 + 7, proof=None, folder=Path("/nonexistent"))
    foreign_calls = {
        "agent_tty_spawn": {"request": SpawnRequest(FOREIGN, ("true",), {}, None, 80, 24)},
        "agent_tty_capture_program": {"mechanism": FOREIGN, "pid": 2**22 + 7, "host_pid": 1},
        "agent_tty_capture_reap": {"mechanism": FOREIGN, "pid": 2**22 + 7},
        "agent_tty_runs_inside": {"mechanism": FOREIGN, "program_pid": 2**22 + 7, "host_identity": None},
        "agent_tty_leave_program_group": {"mechanism": FOREIGN},
        "agent_tty_judge_group": {"group": group},
        "agent_tty_kill_group": {"group": group, "signal": 0},
        "agent_tty_group_alive": {"group": group},
        "agent_tty_release_group": {"group": group},
        "agent_tty_capture_host": {"mechanism": FOREIGN, "pid": 1},
        "agent_tty_judge_host": {"mechanism": FOREIGN, "pid": 1, "identity": None},
        "agent_tty_kill_host": {"mechanism": FOREIGN, "pid": 2**22 + 7, "identity": {}},
    }
    for name, kwargs in foreign_calls.items():
        hook = getattr(plugin, name, None)
        if hook is not None:
            assert hook(**kwargs) is None, f"{name} must return None for a mechanism that is not its own"
    return result
