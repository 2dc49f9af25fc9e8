"""A command declared with typer, parsed by click (docs/adr/0011-typer-declares-click-parses.md).

Each command module declares its parameters the typer way, in `Annotated` annotations:
`session_id: Annotated[str, typer.Argument(metavar="ID")]`,
`scrollback: Annotated[bool, typer.Option("--scrollback", help=...)] = False`. The annotations
are strings (`from __future__ import annotations`) that only this module evaluates, so running
a command imports neither typer nor click (docs/adr/0027). This module builds one
`click.Command` from them, so the parsing, the errors and their exit codes are the same under
every typer from the oldest we support to the newest, and no typer release's parameter
machinery (pydantic in 0.20 and later) runs. It also writes `agent_tty/cli/argtable.py`, the
table the hot path parses from (agent_tty/cli/fastparse.py): `python -m agent_tty.cli.parse`.
Only the shapes the commands use are supported; anything else is a programming error, caught by
tests/unit/test_cli_parse.py for every command.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin

import click
import typer

HELP_OPTIONS = ["-h", "--help"]

# The annotation's type to the click type and whether the parameter takes many values.
_TYPES: dict[Any, tuple[Any, bool]] = {
    str: (click.STRING, False),
    str | None: (click.STRING, False),
    int: (click.INT, False),
    int | None: (click.INT, False),
    bool: (click.BOOL, False),
    list[str]: (click.STRING, True),
}

# What a declaration may name: the annotations are evaluated here, not in the command's module.
_NAMESPACE = {"Annotated": Annotated, "typer": typer}


class DeclarationError(TypeError):
    """A command's signature uses a shape this parser does not support."""


def _declaration(command: str, parameter: inspect.Parameter) -> tuple[Any, Any, tuple[str, ...]]:
    """A parameter's type, its typer ArgumentInfo/OptionInfo and its option names, from
    `Annotated[type, info]`. As typer reads it there, an option's first positional is a name,
    not a default (the default is the parameter's own: `= value`)."""
    annotation = parameter.annotation
    if isinstance(annotation, str):
        annotation = eval(annotation, dict(_NAMESPACE))  # noqa: S307 (our own modules' annotations)
    args = get_args(annotation) if get_origin(annotation) is Annotated else ()
    declared = args[1] if len(args) == 2 else None
    if isinstance(declared, typer.models.OptionInfo) and args[0] in _TYPES:
        first = () if declared.default is ... else (declared.default,)
        return args[0], declared, (*first, *(declared.param_decls or ()))
    if isinstance(declared, typer.models.ArgumentInfo) and args[0] in _TYPES and declared.default is ...:
        return args[0], declared, ()
    raise DeclarationError(f"{command}: parameter {parameter.name!r} ({parameter.annotation!r}) is not a supported declaration")


class Command(click.Command):
    """click's command, with an "Arguments:" section for arguments that carry help (typer's habit)."""

    def __init__(self, *args: Any, argument_help: list[tuple[str, str]], examples: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.argument_help = argument_help
        self.examples = examples

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if self.argument_help:
            with formatter.section("Arguments"):
                formatter.write_dl(self.argument_help)
        super().format_options(ctx, formatter)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if self.examples:
            with formatter.section("Examples"):
                for example in self.examples:  # as written: click would rewrap them
                    formatter.write(f"{'':>{formatter.current_indent}}{example}\n")


def build(name: str, summary: str, function: Callable[..., Any], examples: tuple[str, ...] = (), resolve_ids: bool = True) -> Command:
    """The click command for `function`, whose annotations are typer's parameter declarations."""
    params: list[click.Parameter] = []
    argument_help: list[tuple[str, str]] = []
    for parameter in inspect.signature(function).parameters.values():
        base, declared, names = _declaration(name, parameter)
        click_type, many = _TYPES[base]
        required = parameter.default is inspect.Parameter.empty
        default = None if required else parameter.default
        help_text = getattr(declared, "help", None)
        if isinstance(declared, typer.models.ArgumentInfo):
            metavar = declared.metavar or parameter.name.upper()
            # No default at all when required: click 8.3 and later read an explicit None as a
            # value given, and would not report the argument missing.
            extra = {} if required or many else {"default": default}
            params.append(
                click.Argument([parameter.name], type=click_type, required=required, nargs=-1 if many else 1, metavar=metavar, **extra)
            )
            if help_text:
                argument_help.append((metavar, help_text))
            continue
        decls = [*names, parameter.name]
        if base is bool:
            params.append(click.Option(decls, is_flag=True, default=bool(default), help=help_text))
        else:
            extra = {} if required else {"default": list(default) if many else default}
            params.append(click.Option(decls, type=click_type, required=required, multiple=many, help=help_text, **extra))

    def callback(**values: Any) -> Any:
        # click gives a repeated option or a variadic argument as a tuple; commands take lists.
        values = {key: list(value) if isinstance(value, tuple) else value for key, value in values.items()}
        if resolve_ids:  # False in tests of parsing alone: no Home to resolve ids in
            from agent_tty.cli.resolve import resolve_arguments

            values = resolve_arguments(values)
        return function(**values)

    return Command(
        name,
        params=params,
        callback=callback,
        help=summary,
        context_settings={"help_option_names": HELP_OPTIONS},
        argument_help=argument_help,
        examples=examples,
    )


def table_row(command: click.Command) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """What agent_tty/cli/fastparse.py needs of `command`: its arguments (dest, type, many,
    required, default) in order, and its options (names, dest, type, many, required, default)."""
    arguments: list[tuple[Any, ...]] = []
    options: list[tuple[Any, ...]] = []
    for param in command.params:
        kind = "int" if isinstance(param.type, click.types.IntParamType) else "str"
        if isinstance(param, click.Argument):
            many = param.nargs == -1
            if many and arguments[-1:] and arguments[-1][2]:
                raise DeclarationError(f"{command.name}: two variadic arguments")
            arguments.append((param.name, kind, many, param.required, None if many or param.required else param.default))
            continue
        assert isinstance(param, click.Option)
        if param.secondary_opts or param.count or any(len(name) == 2 and not param.is_flag for name in param.opts):
            raise DeclarationError(f"{command.name}: option {param.name!r} has a shape fastparse does not read")
        if param.is_flag:
            options.append((tuple(param.opts), param.name, "bool", False, False, bool(param.default)))
        else:
            default = None if param.required else list(param.default or ()) if param.multiple else param.default
            options.append((tuple(param.opts), param.name, kind, param.multiple, param.required, default))
    if any(row[2] for row in arguments[:-1]):
        raise DeclarationError(f"{command.name}: a variadic argument that is not the last")
    return tuple(arguments), tuple(options)


def table_source() -> str:
    """agent_tty/cli/argtable.py as it must read for the commands' declarations."""
    import importlib

    from agent_tty.cli.main import COMMANDS

    rows = {name: table_row(build(name, info.summary, importlib.import_module(info.module).command)) for name, info in COMMANDS.items()}
    return (
        '"""Generated from the commands\' typer declarations by `python -m agent_tty.cli.parse`: do not edit.\n\n'
        "Each command: its arguments (dest, type, many, required, default) in order and its options\n"
        "(names, dest, type, many, required, default), as agent_tty/cli/fastparse.py reads them.\n"
        'tests/unit/test_fastparse.py fails when this differs from what the declarations say.\n"""\n\n'
        "TABLE = {\n"
        + "".join(f"    {name!r}: (\n{_lines(arguments)}{_lines(options)}    ),\n" for name, (arguments, options) in rows.items())
        + "}\n"
    )


def _lines(items: tuple[Any, ...]) -> str:
    return "        (\n" + "".join(f"            {item!r},\n" for item in items) + "        ),\n" if items else "        (),\n"


if __name__ == "__main__":  # pragma: no cover
    from pathlib import Path

    Path(__file__).with_name("argtable.py").write_text(table_source())
