"""The platform plugins that ship with agent-tty (import name `agent_tty_plugins`)."""
