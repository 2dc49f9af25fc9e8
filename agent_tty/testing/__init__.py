"""Test helpers for platform plugin authors: run our behavioural contract against your plugin.

    from agent_tty.testing import check_plugin_behaviour

    def test_my_plugin_keeps_its_promises(tmp_path):
        report = check_plugin_behaviour(my_package.plugin, "my_mechanism", workdir=tmp_path)
        assert not report.skipped, report.skipped   # or accept skips where your probe says unusable

`agent_tty.platform.contract.check_plugin` checks shapes only (hook names, the probe, "not my
mechanism"); `check_plugin_behaviour` runs real processes through your hooks and raises
AssertionError naming the broken promise, each message starting with a stable tag such as
"[signals-without-proof]" (see `agent_tty.testing.behaviour` for the list).

`python -m agent_tty.testing MECHANISM` runs the kit against an installed plugin, then agent-tty's
integration suite pinned to it (from a checkout: `--suite`; see `agent_tty.testing.__main__`).
"""

from agent_tty.testing.behaviour import TAGS, BehaviourReport, check_plugin_behaviour

__all__ = ["TAGS", "BehaviourReport", "check_plugin_behaviour"]
