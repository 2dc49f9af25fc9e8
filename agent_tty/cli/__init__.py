"""The command-line interface: one module per command, loaded only when that command runs."""
