"""agent-tty dashboard: a read-only terminal view of a Home's sessions, one mirrored live (ADR 0043).

`follow` reads a session's event log as it grows into a screen model; `frame` lays out one
frame of text from what it is given; `app` owns the terminal (raw mode, alternate screen, keys,
resize). Nothing here writes to the Home or connects to a host.
"""
