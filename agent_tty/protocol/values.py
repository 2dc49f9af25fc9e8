"""Parsers of the values users type: durations, signals, sizes. A bad value is exit 2."""

from __future__ import annotations

import re

from agent_tty.protocol.errors import invalid

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)?")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
MAX_DURATION_S = 365 * 86400.0
"""The longest duration any option takes (a year); 0 means no limit where an option allows it."""


def parse_duration(text: str, what: str = "duration", bare_unit: str = "s") -> float:
    """'500ms', '2s', '5m', '1h', '3d' -> seconds. A bare number is in `bare_unit`: seconds,
    or milliseconds for the options whose name ends in -ms. At most a year (never an overflow)."""
    value = text.strip()
    match = _DURATION.fullmatch(value)
    if not match:
        raise invalid(
            f"invalid {what} {text!r}: use a number with ms, s, m, h or d (e.g. 500ms, 2s, 5m); "
            f"a bare number is in {'milliseconds' if bare_unit == 'ms' else 'seconds'}",
            value=text,
        )
    seconds = float(match.group(1)) * _UNIT_S[match.group(2) or bare_unit]
    if seconds > MAX_DURATION_S:
        raise invalid(f"invalid {what} {text!r}: at most 365d (0 where it means no limit)", value=text)
    return seconds


def parse_duration_ms(text: str, what: str, bare_unit: str = "s") -> int:
    """A duration option's value in whole milliseconds (rounded up: 0.5ms is not 0)."""
    seconds = parse_duration(text, what, bare_unit)
    return -int(-seconds * 1000 // 1)


def seconds_ms(seconds: object, what: str) -> int:
    """A number of seconds (the API's and MCP's durations), 0 to a year, as milliseconds."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= MAX_DURATION_S:
        raise invalid(f"invalid {what} {seconds!r}: seconds, from 0 to {MAX_DURATION_S:g}", value=repr(seconds))
    return round(seconds * 1000)


def timeout_seconds_ms(seconds: object, what: str = "timeout") -> int | None:
    """A time-out in seconds (None or 0: no limit) as the operations' milliseconds."""
    if seconds is None or seconds == 0:
        return None
    return max(1, seconds_ms(seconds, what))


def positive_ms(value: object, what: str) -> int:
    """A number of milliseconds (`screen_stable_ms`, `idle_ms` in the API and MCP): more than 0,
    at most a year, rounded up to a whole millisecond as the CLI rounds `--screen-stable-ms 0.5`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_DURATION_S * 1000:
        raise invalid(f"invalid {what} {value!r}: milliseconds, more than 0 and at most {MAX_DURATION_S * 1000:g}", value=repr(value))
    return -int(-value // 1)


def parse_signal(text: str) -> int:
    """'INT', 'SIGINT', 'int' or '2' -> 2."""
    import signal

    value = text.strip()
    if value.isdigit():
        number = int(value)
        if number in signal.Signals._value2member_map_:
            return number
    else:
        name = value.upper()
        name = name if name.startswith("SIG") else "SIG" + name
        member = signal.Signals.__members__.get(name)
        if member is not None:
            return int(member)
    raise invalid(f"invalid signal {text!r}: use a name such as INT, TERM, HUP or a number", value=text)


MAX_COLS = 1000
MAX_ROWS = 1000
MAX_CELLS = 250_000
"""The largest terminal: at most 1000 columns, 1000 rows and 250,000 cells (1000x250, 500x500).
Every reply that reads the whole grid (a structured snapshot, a screenshot) costs time and
memory in proportion to the cells; this bounds both (docs/USAGE.md, Limits)."""


def size_problem(cols: object, rows: object) -> str | None:
    """Why `cols` x `rows` is not a size we draw, or None when it is."""
    for label, value, most in (("cols", cols, MAX_COLS), ("rows", rows, MAX_ROWS)):
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
            return f"invalid {label} {value!r}: expected 1 to {most}"
    assert isinstance(cols, int) and isinstance(rows, int)
    if cols * rows > MAX_CELLS:
        return f"invalid size {cols}x{rows}: at most {MAX_CELLS:,} cells (cols x rows), e.g. 1000x250 or 500x500"
    return None


def check_cells(cols: int, rows: int, most: int | None) -> None:
    """A structured read of a cols x rows grid when the caller takes at most `most` cells a call
    (None: no bound). The MCP server bounds its calls so that one large grid cannot hold the
    event loop every other call is answered on (docs/adr/0025)."""
    if most is None:
        return
    if isinstance(most, bool) or not isinstance(most, int) or most < 1:
        raise invalid(f"invalid max_cells {most!r}: a whole number of cells, 1 or more", value=repr(most))
    if cols * rows > most:
        raise invalid(
            f"a structured snapshot of {cols}x{rows} is {cols * rows:,} cells, over the {most:,} cells one call "
            "returns: take the text snapshot (not structured), a screenshot, or a smaller screen (resize)",
            limit=most,
            cells=cols * rows,
            cols=cols,
            rows=rows,
        )


def check_size(cols: int, rows: int) -> None:
    problem = size_problem(cols, rows)
    if problem is not None:
        raise invalid(problem, cols=cols, rows=rows)


def check_launch_text(argv: list[str], env: dict[str, str], cwd: str, term: str) -> None:
    """What a program is started with must reach it as given, and be recorded as given: text
    without NUL (the kernel would cut it there), valid UTF-8 (the records are JSON text), and
    env names without `=` (the kernel would split the entry there). Refused here as the caller's
    error, before anything is made: accepted, the program would exit 127 silently or create
    would fail half-way."""
    named = [(f"argv[{index}]", arg) for index, arg in enumerate(argv)]
    named += [("cwd", cwd), ("term", term)]
    for key, value in env.items():
        if not isinstance(key, str) or not key or "=" in key:
            raise invalid(f"invalid env name {key!r}: a name is not empty and holds no '='", value=repr(key))
        named += [(f"env name {key!r}", key), (f"env {key!r}", value)]
    for label, text in named:
        check_text(label, text)


def check_text(label: str, text: object) -> None:
    problem = _text_problem(text)
    if problem is not None:
        raise invalid(f"invalid {label}: {problem}", value=repr(text))


def _text_problem(text: object) -> str | None:
    if not isinstance(text, str):
        return f"expected text, got {type(text).__name__}"
    if "\0" in text:
        return "it holds a NUL character, which a program's arguments and environment cannot carry"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return (
            "it is not valid UTF-8 (agent-tty records what it starts as JSON text); let the program "
            "make such bytes instead, e.g. bash -c \"echo caf$'\\xe9'\" or bash -c \"cd $'d\\xe9' && ...\""
        )
    return None
