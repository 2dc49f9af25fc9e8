"""The MCP server's published schemas (agent_tty/mcp/results.py) accept exactly what the result
models' full schemas accept: only annotations are dropped, bare-type anyOfs merged and
single-use definitions written in place (docs/adr/0034)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from agent_tty.mcp.results import published_input_schema, published_output_schema
from agent_tty.schema import RESULTS

ANNOTATIONS = {"title", "description", "default", "examples"}


def canonical(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """`schema` as what it accepts: local refs resolved (the models are not recursive), no
    annotations, a `type` list as the anyOf of its types."""
    if defs is None and isinstance(schema, dict):
        defs = schema.get("$defs", {})
    if isinstance(schema, list):
        return [canonical(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ANNOTATIONS or key == "$defs":
            continue
        if key == "$ref":
            out.setdefault("allOf", []).append(canonical((defs or {})[value.removeprefix("#/$defs/")], defs))
        elif key in ("properties", "patternProperties"):
            out[key] = {name: canonical(sub, defs) for name, sub in value.items()}
        elif key in ("enum", "const", "required"):
            out[key] = value
        else:
            out[key] = canonical(value, defs)
    if isinstance(out.get("type"), list):
        out["anyOf"] = [{"type": kind} for kind in out.pop("type")]
    if list(out) == ["allOf"] and len(out["allOf"]) == 1:
        return out["allOf"][0]
    return out


@pytest.mark.parametrize("model", sorted(set(RESULTS.values()), key=lambda m: m.__name__), ids=lambda m: m.__name__)
def test_a_published_output_schema_accepts_what_the_model_does(model: Any) -> None:
    full = TypeAdapter(model).json_schema()
    published = published_output_schema(full)
    assert canonical(published) == canonical(full)
    assert len(str(published)) < len(str(full))


def test_only_annotations_leave_and_names_stay() -> None:
    # A property called `title` (a snapshot's) is a name, not the annotation.
    schema = {"title": "X", "type": "object", "properties": {"title": {"title": "Title", "type": "string"}}}
    assert published_output_schema(schema) == {"type": "object", "properties": {"title": {"type": "string"}}}
    arguments = {"title": "A", "type": "object", "properties": {"n": {"title": "N", "description": "d", "default": 1, "type": "integer"}}}
    assert published_input_schema(arguments) == {"type": "object", "properties": {"n": {"description": "d", "default": 1, "type": "integer"}}}


def test_a_definition_used_twice_or_by_itself_stays_a_definition() -> None:
    node = {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/Pair"}, "b": {"$ref": "#/$defs/Pair"}, "c": {"$ref": "#/$defs/One"}, "d": {"$ref": "#/$defs/Node"}},
        "$defs": {"Pair": {"type": "integer"}, "One": {"type": "string", "title": "One"}, "Node": node},
    }
    published = published_output_schema(schema)
    assert published is not None
    assert published["properties"]["c"] == {"type": "string"}
    assert set(published["$defs"]) == {"Pair", "Node"}
