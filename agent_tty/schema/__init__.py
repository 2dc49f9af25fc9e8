"""JSON Schema of every command's `--json` document, from pydantic v2 models.

The models define the contract and validate documents in tests and the MCP server; the CLI
itself emits plain dicts and never imports this package on a command's path (docs/adr/0018).
Importable without the CLI: `from agent_tty.schema import RESULTS, envelope_schema`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agent_tty.schema.batch import BatchResult
from agent_tty.schema.drive import InputResult, KeysResult, MarkResult, ResizeResult, RunResult, SignalResult
from agent_tty.schema.envelope import ErrorEnvelope, envelope_adapter, envelope_json_schema
from agent_tty.schema.environment import (
    CommandHelp,
    CompletionInstalled,
    DoctorResult,
    HelpResult,
    McpResult,
    SchemaResult,
    VersionResult,
)
from agent_tty.schema.lifecycle import CreateResult, DestroyResult, GcResult, InspectResult, ListResult
from agent_tty.schema.observe import DashboardResult, RecordResult, ScreenshotResult, SnapshotResult, WaitResult

RESULTS: dict[str, type[BaseModel]] = {
    "create": CreateResult,
    "list": ListResult,
    "inspect": InspectResult,
    "destroy": DestroyResult,
    "gc": GcResult,
    "resize": ResizeResult,
    "signal": SignalResult,
    "run": RunResult,
    "type": InputResult,
    "paste": InputResult,
    "send-keys": KeysResult,
    "wait": WaitResult,
    "batch": BatchResult,
    "snapshot": SnapshotResult,
    "screenshot": ScreenshotResult,
    "record": RecordResult,
    "mark": MarkResult,
    "version": VersionResult,
    "doctor": DoctorResult,
    "platform": DoctorResult,
    "schema": SchemaResult,
    "mcp": McpResult,
    "dashboard": DashboardResult,
    # Not in the command table, but they answer --json too (cli/main.py).
    "help": HelpResult,
    "install-completion": CompletionInstalled,
}
"""Command name -> the model of its `result`."""


def envelope_schema(command: str) -> dict[str, Any]:
    """The JSON Schema of `command`'s envelope: oneOf its ok and its error document.
    KeyError for a command without a result model."""
    return envelope_json_schema(command, RESULTS[command])


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every command's envelope schema, keyed by command name."""
    return {command: envelope_schema(command) for command in RESULTS}


def validate_envelope(document: Any) -> BaseModel:
    """Validate one `--json` document against its command's envelope; a document for no known
    command (an unknown command's USAGE error) must be an ErrorEnvelope. Raises
    pydantic.ValidationError."""
    command = document.get("command") if isinstance(document, dict) else None
    if command not in RESULTS:
        return ErrorEnvelope.model_validate(document)
    validated: BaseModel = envelope_adapter(command, RESULTS[command]).validate_python(document)
    return validated


__all__ = ["RESULTS", "CommandHelp", "ErrorEnvelope", "all_schemas", "envelope_schema", "validate_envelope"]
