"""agent-tty schema [COMMAND]: the JSON Schema of every command's --json document."""

from __future__ import annotations

import json
from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    name: Annotated[str | None, typer.Argument(metavar="[COMMAND]", help="One command's envelope schema (default: all, keyed by command).")] = None,
) -> int:
    # pydantic loads here only: every other command emits plain dicts (docs/adr/0018).
    from agent_tty.protocol.errors import invalid
    from agent_tty.schema import RESULTS, all_schemas, envelope_schema

    if name is None:
        result = all_schemas()
    elif name in RESULTS:
        result = envelope_schema(name)
    else:
        raise invalid(f"unknown command {name!r}: the schema knows {', '.join(RESULTS)}", value=name, known=list(RESULTS))
    emit(result, json.dumps(result, indent=2, ensure_ascii=False))
    return 0
