"""The base of every result model: camelCase keys exactly as emitted, unknown keys refused."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Model(BaseModel):
    """A closed object: a key the model does not name fails validation, so the schema test
    catches a field a command started to emit without a schema change."""

    model_config = ConfigDict(extra="forbid")


def doc(description: str, default: Any = ..., **kwargs: Any) -> Any:
    """A field with its description (it reaches MCP clients as the field's documentation)."""
    return Field(default, description=description, **kwargs)


def absent(description: str) -> Any:
    """A key a command emits only in some outcomes: not required, and not null when present
    (unless its type says so). In Python an absent key reads as None; its schema has no default."""
    return Field(None, description=description, json_schema_extra=_no_default)


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


class ResolvedFrom(Model):
    by: Literal["name", "prefix"] = doc("How the session argument matched: a session's name, or a unique prefix of its id.")
    ref: str = doc("The session argument as it was given.")


class SessionResult(Model):
    """A result about one session; the session argument may have been a name or an id prefix."""

    sessionId: str = doc("The session's id.")
    resolvedFrom: ResolvedFrom = absent("Present only when the session argument was a name or an id prefix, not the id itself.")
