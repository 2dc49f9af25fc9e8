"""A command declared with typer, parsed by click (docs/adr/0011-typer-declares-click-parses.md).

Each command module writes its parameters the typer way (`typer.Argument(...)`,
`typer.Option(...)` defaults). This module reads those declarations and builds one
`click.Command`, so the parsing, the errors and their exit codes are the same under every typer
from 0.12 to the newest, and no typer release's parameter machinery (pydantic in 0.20 and later)
runs at start-up. Only the shapes the commands use are supported; anything else is a
programming error, caught by tests/unit/test_cli_parse.py for every command.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import click

HELP_OPTIONS = ["-h", "--help"]

# The annotation, as written (commands use `from __future__ import annotations`), to the click
# type and whether the parameter takes many values.
_TYPES: dict[str, tuple[Any, bool]] = {
    "str": (click.STRING, False),
    "Optional[str]": (click.STRING, False),
    "str | None": (click.STRING, False),
    "int": (click.INT, False),
    "Optional[int]": (click.INT, False),
    "int | None": (click.INT, False),
    "bool": (click.BOOL, False),
    "list[str]": (click.STRING, True),
}


class DeclarationError(TypeError):
    """A command's signature uses a shape this parser does not support."""


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
    """The click command for `function`, whose defaults are typer's parameter declarations."""
    params: list[click.Parameter] = []
    argument_help: list[tuple[str, str]] = []
    for parameter in inspect.signature(function).parameters.values():
        declared = parameter.default
        kind = type(declared).__name__  # typer.models.ArgumentInfo / OptionInfo, in every release
        annotation = parameter.annotation if isinstance(parameter.annotation, str) else getattr(parameter.annotation, "__name__", "")
        if annotation not in _TYPES or kind not in ("ArgumentInfo", "OptionInfo"):
            raise DeclarationError(f"{name}: parameter {parameter.name!r} ({annotation!r}, {kind}) is not a supported declaration")
        click_type, many = _TYPES[annotation]
        default = declared.default
        required = default is ... or default is Ellipsis
        help_text = getattr(declared, "help", None)
        if kind == "ArgumentInfo":
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
        decls = [*declared.param_decls, parameter.name]
        if annotation == "bool":
            params.append(click.Option(decls, is_flag=True, default=bool(default), help=help_text))
        else:
            extra = {} if required else {"default": list(default) if many else default}
            params.append(click.Option(decls, type=click_type, required=required, multiple=many, help=help_text, **extra))

    def callback(**values: Any) -> Any:
        # click gives a repeated option or a variadic argument as a tuple; commands take lists.
        values = {key: list(value) if isinstance(value, tuple) else value for key, value in values.items()}
        if resolve_ids and isinstance(values.get("session_id"), str):
            # A parameter named session_id takes an id, a name or an id prefix (cli/resolve.py).
            from agent_tty.cli.resolve import resolve_session

            values["session_id"] = resolve_session(values["session_id"])
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
