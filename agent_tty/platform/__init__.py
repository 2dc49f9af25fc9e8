"""The platform seam: how a third party adds a platform to agent-tty.

The lifecycle engine never touches /proc, cgroupfs, ps or signals. It asks the hooks in
`agent_tty.platform.hookspecs`, through the one typed door `agent_tty.platform.manager.Platform`.

A platform plugin is a module (or object) with `@hookimpl` functions. Register it with an
entry point in the `agent_tty.platform` group; the entry point's name is the mechanism name
that program.json and host.json record::

    [project.entry-points."agent_tty.platform"]
    my_mechanism = "my_package.my_plugin"

Every hook but `agent_tty_probe` receives the mechanism (directly or in the record it judges)
and must return None when it is not its own, so one plugin answers each call. Use
`agent_tty.platform.contract` to run our contract tests against your plugin.
Set AGENT_TTY_DISABLE_PLUGIN_AUTOLOAD=1 to load the built-in plugins only.
"""

import pluggy

hookspec = pluggy.HookspecMarker("agent_tty")
hookimpl = pluggy.HookimplMarker("agent_tty")
