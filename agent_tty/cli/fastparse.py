"""The hot path's parser: a command line read against agent_tty/cli/argtable.py, no click.

It takes only what it can read the one way click would: long options by their exact name
(`--name V`, `--name=V`), flags, a short flag alone (`-f`), `--`, and positional arguments in
order with the variadic one last. Anything else (`--help`, an unknown or abbreviated option,
a missing or extra argument, a value that is not an int, a value that starts with `-`, short
options run together) gives None, and the caller hands the same arguments to click
(agent_tty/cli/parse.py), whose messages and exit codes are the contract. So this parser
decides nothing click would decide differently: it returns click's values or gives way
(tests/unit/test_fastparse.py compares the two on every command).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def parse(row: tuple[tuple[Any, ...], tuple[Any, ...]], args: list[str]) -> dict[str, Any] | None:
    """The command function's keyword arguments for `args`, or None to let click parse them."""
    arguments, options = row
    by_name = {name: option for option in options for name in option[0]}
    given: dict[str, Any] = {}
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            positional.extend(args[i:])
            break
        if arg[:1] != "-" or len(arg) == 1:
            positional.append(arg)
            continue
        name, has_value, value = arg.partition("=") if arg[:2] == "--" else (arg, "", "")
        option = by_name.get(name)
        if option is None:
            return None
        _, dest, kind, many, _, _ = option
        if kind == "bool":
            if has_value:
                return None
            given[dest] = True
            continue
        if not has_value:
            if i >= len(args):
                return None
            value = args[i]
            i += 1
            if value[:1] == "-":  # click would take it as the value; let it say so
                return None
        converted = _convert(kind, value)
        if converted is None:
            return None
        if many:
            given.setdefault(dest, []).append(converted)
        else:
            given[dest] = converted  # the last one wins, as in click
    values: dict[str, Any] = {}
    for dest, kind, many, required, default in arguments:
        if many:
            taken, positional = positional, []
        elif positional:
            taken = positional.pop(0)
        else:
            taken = None
        if not taken and (many or taken is None):
            if required:
                return None
            values[dest] = [] if many else default
            continue
        converted = [_convert(kind, item) for item in taken] if many else _convert(kind, taken)
        if converted is None or (many and None in converted):
            return None
        values[dest] = converted
    if positional:
        return None
    for _names, dest, kind, many, required, default in options:
        if dest in given:
            values[dest] = given[dest]
        elif required:
            return None
        else:
            values[dest] = list(default) if many else default
    return values


def _convert(kind: str, value: str) -> Any:
    if kind != "int":
        return value
    try:
        return int(value.strip())
    except ValueError:
        return None
