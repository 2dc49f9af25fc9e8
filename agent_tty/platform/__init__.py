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


PROJECT = "agent_tty"
"""pluggy's project name: hooks are `agent_tty_*`, markers the `agent_tty_impl`/`_spec` attributes."""


def hookimpl(
    function: Any = None,
    hookwrapper: bool = False,
    optionalhook: bool = False,
    tryfirst: bool = False,
    trylast: bool = False,
    specname: str | None = None,
    wrapper: bool = False,
) -> Any:
    """Mark a hook implementation, as `pluggy.HookimplMarker("agent_tty")` does (the same
    signature, the same attribute and options, which pluggy reads when it registers the plugin),
    without importing pluggy: a command that calls one built-in plugin's hook never loads it
    (issue 26, ADR 0046). tests/unit/test_platform_markers.py holds the two equal."""

    def mark(func: Any) -> Any:
        setattr(
            func,
            PROJECT + "_impl",
            {
                "wrapper": wrapper,
                "hookwrapper": hookwrapper,
                "optionalhook": optionalhook,
                "tryfirst": tryfirst,
                "trylast": trylast,
                "specname": specname,
            },
        )
        return func

    return mark if function is None else mark(function)


def __getattr__(name: str) -> Any:
    """`hookspec`, made on first use: importing pluggy costs tens of ms, and only the manager's
    hook table (agent_tty.platform.hookspecs) needs it."""
    if name == "hookspec":
        import pluggy

        marker = pluggy.HookspecMarker(PROJECT)
        globals()[name] = marker
        return marker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
