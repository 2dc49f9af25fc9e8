"""The platform seam: how a third party adds a platform to agent-tty (docs/plugins.md).

The lifecycle engine never touches /proc, cgroupfs, ps or signals. It asks the hooks in
`agent_tty.platform.hookspecs`, through the one typed door `agent_tty.platform.manager.Platform`;
the facts of the machine itself (user, transport, launch) come from `agent_tty.platform.system`
(docs/adr/0010-the-platform-seam.md).

A platform plugin is an object with `@hookimpl` methods, most easily a subclass of
`agent_tty.platform.base.MechanismPlugin`. Register it with an entry point in the
`agent_tty.platform` group; the entry point's name is the mechanism name that program.json and
host.json record::

    [project.entry-points."agent_tty.platform"]
    my_mechanism = "my_package.my_plugin:plugin"

Test it with `agent_tty.platform.contract.check_plugin` (shapes) and
`agent_tty.testing.check_plugin_behaviour` (real processes).
Set AGENT_TTY_DISABLE_PLUGIN_AUTOLOAD=1 to load the built-in plugins only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs every command ~2 ms at start-up (issue 26)
    from typing import Any


def __getattr__(name: str) -> Any:
    """`hookspec` and `hookimpl`, made on first use: importing pluggy costs tens of ms, and a
    command that only talks to a host (agent_tty.platform.system) never needs it."""
    if name in ("hookspec", "hookimpl"):
        import pluggy

        marker = pluggy.HookspecMarker("agent_tty") if name == "hookspec" else pluggy.HookimplMarker("agent_tty")
        globals()[name] = marker
        return marker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
