"""agent-tty: real, long-lived terminals for AI agents, safe when many agents share one machine.

This package imports nothing heavy: every command loads only what it needs.
"""

__version__ = "0.1.0"
