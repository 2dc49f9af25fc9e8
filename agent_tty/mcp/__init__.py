"""`agent-tty mcp`: the Python API's operations as the tools of an MCP server over stdio.

Imported only by the `mcp` command: the SDK and pydantic never load on another command's start-up.
"""
