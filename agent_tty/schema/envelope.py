"""The `--json` envelopes (CLI-CONTRACT.md "Envelope"): a command's ok and error documents."""

from __future__ import annotations

from functools import cache
from typing import Any, Literal, Union

from pydantic import BaseModel, TypeAdapter, create_model

from agent_tty.protocol.errors import ErrorCode
from agent_tty.schema.base import Model, doc
from agent_tty.schema.environment import CommandHelp

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class ErrorBody(Model):
    code: ErrorCode = doc("The stable error code; the exit code follows from it (CLI-CONTRACT.md).")
    message: str = doc("What went wrong, for a person.")
    details: dict[str, Any] = doc("Structured facts about the error (sessionId, path, value, ...); may be empty.")


class ErrorEnvelope(Model):
    """Any failure, whichever command (or none: an unknown command) it is for."""

    ok: Literal[False] = doc("Always false: the command failed.")
    command: str = doc("The command as given (empty when none was).")
    error: ErrorBody = doc("The error.")


@cache
def ok_envelope(command: str, result: type[BaseModel]) -> type[BaseModel]:
    """`{"ok": true, "command": NAME, "result": ...}`; a command's --help answers a CommandHelp."""
    body: Any = result if result is CommandHelp else Union[result, CommandHelp]  # noqa: UP007 - a Union of classes made at run time
    return create_model(  # type: ignore[call-overload,no-any-return]
        f"{_title(command)}Ok",
        __base__=Model,
        ok=(Literal[True], doc("Always true: the command did what it was asked.")),
        command=(Literal[command], doc("The command's name.")),  # type: ignore[valid-type]
        result=(body, doc("The command's result.")),
    )


@cache
def error_envelope(command: str) -> type[BaseModel]:
    return create_model(  # type: ignore[call-overload,no-any-return]
        f"{_title(command)}Error",
        __base__=Model,
        ok=(Literal[False], doc("Always false: the command failed.")),
        command=(Literal[command], doc("The command's name.")),  # type: ignore[valid-type]
        error=(ErrorBody, doc("The error.")),
    )


def envelope_adapter(command: str, result: type[BaseModel]) -> TypeAdapter[Any]:
    return TypeAdapter(Union[ok_envelope(command, result), error_envelope(command)])  # type: ignore[arg-type]  # noqa: UP007 - made at run time


def envelope_json_schema(command: str, result: type[BaseModel]) -> dict[str, Any]:
    """The oneOf of the ok and the error envelope (exclusive: `ok` is a constant in each)."""
    schema = envelope_adapter(command, result).json_schema()
    schema["oneOf"] = schema.pop("anyOf")
    return {"$schema": JSON_SCHEMA_DIALECT, "title": f"agent-tty {command} --json", **schema}


def _title(command: str) -> str:
    return "".join(part.title() for part in command.split("-"))
