"""The one place where each tool's output model (its MCP outputSchema) is chosen.

Until agent_tty.schema (the commands' pydantic result models) lands, every result is an open JSON
object. Switching is the one line below: `from agent_tty.schema import RESULTS`.
"""

from __future__ import annotations

from typing import Any

RESULTS: dict[str, Any] = {}
"""Command name (as the CLI spells it) -> pydantic model of its `--json` result."""

COMMAND_OF_TOOL = {"send_keys": "send-keys", "record_export": "record export"}
"""Tools are named with underscores (MCP clients disallow spaces and some dashes); the schema
table is keyed by command."""


def output_type(tool: str) -> Any:
    """The structured content's type for `tool`: the command's result model, else any object."""
    return RESULTS.get(COMMAND_OF_TOOL.get(tool, tool), dict[str, Any])
