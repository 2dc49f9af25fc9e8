"""The one place where each tool's output model (its MCP outputSchema) is chosen.

The commands' pydantic result models (agent_tty.schema, ADR 0018) are the tools' output schemas;
a tool whose command has none would publish an open JSON object.
"""

from __future__ import annotations

from typing import Any

from agent_tty.schema import RESULTS  # command name (as the CLI spells it) -> result model

COMMAND_OF_TOOL = {"send_keys": "send-keys", "record_export": "record"}
"""Tools are named with underscores (MCP clients disallow spaces and some dashes); the schema
table is keyed by command."""


def output_type(tool: str) -> Any:
    """The structured content's type for `tool`: the command's result model, else any object."""
    return RESULTS.get(COMMAND_OF_TOOL.get(tool, tool), dict[str, Any])
