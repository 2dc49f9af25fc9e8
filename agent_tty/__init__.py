"""agent-tty: real, long-lived terminals for AI agents, safe when many agents share one machine.

This package imports nothing heavy: every command loads only what it needs.
"""

__version__ = "0.1.0"

_API = ("AgentTtyError", "Client", "ErrorCode", "Session")


def __getattr__(name: str) -> object:
    """`from agent_tty import Client`: the API (agent_tty.api) is imported on first use, so a
    command's start-up, which imports this package, does not pay for it."""
    if name in _API:
        from agent_tty import api

        return getattr(api, name)
    raise AttributeError(f"module 'agent_tty' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
