"""One module per command; each exposes `command` (typer) and may expose `fast_path`."""
