"""The one place where each tool's output model (its MCP outputSchema) is chosen, and how the
tools' schemas are published.

The commands' pydantic result models (agent_tty.schema, ADR 0018) are the tools' output schemas;
a tool whose command has none would publish an open JSON object. A client lists the tools into
its model's context, so they are published compact (docs/adr/0034): no titles anywhere, and the
output schemas as structure only (types, enums, required keys, nulls, closed objects), which is
what the client validates a result against; what a model needs of a result is in the tool's
description.
"""

from __future__ import annotations

from typing import Any

from agent_tty.schema import RESULTS  # command name (as the CLI spells it) -> result model

COMMAND_OF_TOOL = {"send_keys": "send-keys", "record_export": "record"}
"""Tools are named with underscores (MCP clients disallow spaces and some dashes); the schema
table is keyed by command."""

_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})
"""Keywords whose value maps names (of properties, definitions) to schemas: the names are data."""
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_VALUES = frozenset({"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"})
_OUTPUT_ANNOTATIONS = frozenset({"title", "description", "default", "examples"})
"""JSON Schema annotations: they change what a schema says to a reader, never what it accepts."""


def output_type(tool: str) -> Any:
    """The structured content's type for `tool`: the command's result model, else any object."""
    return RESULTS.get(COMMAND_OF_TOOL.get(tool, tool), dict[str, Any])


def published_input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema without pydantic's titles ("Session Id" for session_id), which only
    repeat the names; descriptions and defaults stay, they are how a model calls the tool."""
    return _walk(schema, frozenset({"title"}), merge_types=False)


def published_output_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """A tool's output schema as structure only: no annotations, and `anyOf` of bare types as
    one `type` list (`["string", "null"]`). It accepts exactly what `schema` accepts."""
    return None if schema is None else _inline_single_uses(_walk(schema, _OUTPUT_ANNOTATIONS, merge_types=True))


def _walk(schema: Any, dropped: frozenset[str], merge_types: bool) -> Any:
    if not isinstance(schema, dict):
        return schema  # a boolean schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in dropped:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _walk(sub, dropped, merge_types) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_walk(sub, dropped, merge_types) for sub in value]
        elif key in _SCHEMA_VALUES:
            out[key] = _walk(value, dropped, merge_types)
        else:
            out[key] = value  # data: enum, const, required, type, ...
    branches = out.get("anyOf")
    if merge_types and "type" not in out and isinstance(branches, list) and all(_bare_type(b) for b in branches):
        del out["anyOf"]
        out["type"] = [b["type"] for b in branches]
    return out


def _inline_single_uses(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each definition that one `$ref` uses written in its place (a Cursor is read
    where it is, not looked up), and `$defs` only for what is used more than once. The result
    models are not recursive; a definition that refers to itself stays a definition."""
    definitions: dict[str, Any] = schema.get("$defs", {})
    uses: dict[str, int] = {}
    _count_refs({key: value for key, value in schema.items() if key != "$defs"}, uses)
    for name, definition in definitions.items():
        inner: dict[str, int] = {}
        _count_refs(definition, inner)
        if name in inner:
            uses[name] = 2  # recursive: kept
        for other, count in inner.items():
            uses[other] = uses.get(other, 0) + count
    once = {name for name in definitions if uses.get(name) == 1}
    if not once:
        return schema

    def place(node: Any) -> Any:
        if isinstance(node, list):
            return [place(item) for item in node]
        if not isinstance(node, dict):
            return node
        name = _local_ref(node)
        if name in once:
            definition = place(definitions[name])
            siblings = {key: place(value) for key, value in node.items() if key != "$ref"}
            # A $ref's siblings apply beside it (2020-12): merged where no keyword is in both.
            return {**definition, **siblings} if not set(definition) & set(siblings) else {"allOf": [definition], **siblings}
        return {key: place(value) for key, value in node.items()}

    kept = {name: place(definition) for name, definition in definitions.items() if name not in once}
    out = {key: place(value) for key, value in schema.items() if key != "$defs"}
    return {**out, "$defs": kept} if kept else out


def _local_ref(node: dict[str, Any]) -> str | None:
    ref = node.get("$ref")
    return ref.removeprefix("#/$defs/") if isinstance(ref, str) and ref.startswith("#/$defs/") else None


def _count_refs(node: Any, uses: dict[str, int]) -> None:
    if isinstance(node, list):
        for item in node:
            _count_refs(item, uses)
    elif isinstance(node, dict):
        name = _local_ref(node)
        if name is not None:
            uses[name] = uses.get(name, 0) + 1
        for value in node.values():
            _count_refs(value, uses)


def _bare_type(branch: Any) -> bool:
    return isinstance(branch, dict) and set(branch) == {"type"} and isinstance(branch["type"], str)
