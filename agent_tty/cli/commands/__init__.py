"""One module per command; each exposes `command`, its parameters declared with typer in
`Annotated` string annotations (docs/adr/0027), and may expose `fast_path`."""
