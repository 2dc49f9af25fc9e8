"""The engine of the Home this command names (--home, $AGENT_TTY_HOME or the default)."""

from __future__ import annotations

from agent_tty.cli.output import GLOBALS


def cli_engine():  # type: ignore[no-untyped-def]
    from agent_tty.lifecycle.engine import engine_for

    return engine_for(GLOBALS.home)
