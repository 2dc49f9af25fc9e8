"""How an operation's errors name its parameters: each surface in its own words.

The CLI calls an operation with flags (`--screen-stable-ms`); the Python API and the MCP server
with keyword arguments and tool parameters (`screen_stable_ms`), which are spelled alike on
purpose (docs/adr/0028). An error names what its caller typed: an operation takes `names`
(the CLI's by default) and says `names.of("screen_stable_ms")`, never a flag the caller has not.
"""

from __future__ import annotations

from agent_tty.frozen import Frozen


class Names(Frozen):
    """One surface's spelling of the parameters (given as the API spells them)."""

    __slots__ = ("flags",)

    flags: bool

    def of(self, parameter: str) -> str:
        """`screen_stable_ms` as this surface spells it: `--screen-stable-ms` on the CLI."""
        return "--" + parameter.replace("_", "-") if self.flags else parameter

    def one_of(self, *parameters: str) -> str:
        return ", ".join(self.of(parameter) for parameter in parameters)


CLI = Names(flags=True)
"""The CLI's flags: `--` and dashes for underscores (its flags are the API's names, ADR 0028)."""
PYTHON = Names(flags=False)
"""agent_tty.api's keyword arguments, which are also the MCP tools' parameters."""
