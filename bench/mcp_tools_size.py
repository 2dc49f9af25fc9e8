"""The size of `agent-tty mcp`'s `tools/list` answer, as an MCP client receives it.

    .venv/bin/python bench/mcp_tools_size.py [--json]

Starts the real server over stdio with the SDK's client (as tests/integration/test_mcp.py
does), lists the tools and prints, per tool, the bytes of its compact JSON (the tool object as
the client parsed it, re-serialized by alias without nulls and without spaces) split into the
description, the input schema and the output schema, and the total of the `tools` list. A
client puts this list in its model's context on every turn, so every byte is read each time.
No pass/fail: tests/integration/test_mcp.py holds the bound.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

# bench/mcp.py would shadow the SDK (`import mcp`) with this folder first on sys.path.
BENCH = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]

import anyio  # noqa: E402


def compact(value: Any) -> int:
    """Bytes of `value` as compact UTF-8 JSON."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


async def listed_tools(home: str, env: dict[str, str]) -> list[dict[str, Any]]:
    """The tools of one tools/list, as JSON objects (camelCase keys, nulls left out)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    ours = Path(sys.executable).with_name("agent-tty")
    params = StdioServerParameters(command=str(ours), args=["mcp", "--home", home], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.list_tools()
        return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in result.tools]


def sizes(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Per tool: its total and its parts' bytes; and the whole list's."""
    rows = {
        tool["name"]: {
            "total": compact(tool),
            "description": compact(tool.get("description", "")),
            "inputSchema": compact(tool.get("inputSchema", {})),
            "outputSchema": compact(tool.get("outputSchema", {})),
        }
        for tool in tools
    }
    return {"tools": rows, "total": compact({"tools": tools})}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true", help="print the sizes as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bm-", dir="/tmp") as work:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_TTY_")}
        measured = sizes(anyio.run(listed_tools, str(Path(work) / "home"), env))
    if args.json:
        print(json.dumps(measured, indent=2))
        return
    print(f"{'tool':14} {'total':>7} {'descr':>7} {'input':>7} {'output':>7}")
    for name, row in sorted(measured["tools"].items(), key=lambda item: -item[1]["total"]):
        print(f"{name:14} {row['total']:7} {row['description']:7} {row['inputSchema']:7} {row['outputSchema']:7}")
    print(f"tools/list: {measured['total']} bytes of JSON for {len(measured['tools'])} tools")


if __name__ == "__main__":
    main()
