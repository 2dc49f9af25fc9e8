"""The entry point: global options, the command table, and errors turned into envelopes.

Only the module of the command that runs is imported (pip's pattern): agents call this
hundreds of times, and start-up time is most of what a call costs.
"""

from __future__ import annotations

import os
import sys
from agent_tty.cli.output import GLOBALS, emit_error


class CommandInfo:
    """A command's module and one-line summary (a plain class: no typing import at start-up)."""

    __slots__ = ("module", "summary")

    def __init__(self, module: str, summary: str) -> None:
        self.module = module
        self.summary = summary


COMMANDS: dict[str, CommandInfo] = {
    "create": CommandInfo("agent_tty.cli.commands.create", "Start a program in a new session."),
    "list": CommandInfo("agent_tty.cli.commands.list", "List sessions (active ones; --all for every one)."),
    "inspect": CommandInfo("agent_tty.cli.commands.inspect", "Show a session's manifest and derived facts."),
    "destroy": CommandInfo("agent_tty.cli.commands.destroy", "End a session (--force: without its host)."),
    "gc": CommandInfo("agent_tty.cli.commands.gc", "Remove the folders of ended sessions."),
    "resize": CommandInfo("agent_tty.cli.commands.resize", "Resize a session's terminal."),
    "signal": CommandInfo("agent_tty.cli.commands.signal", "Send a signal to a session's program group."),
    "run": CommandInfo("agent_tty.cli.commands.run", "Type a shell command and wait until it completed."),
    "type": CommandInfo("agent_tty.cli.commands.type", "Type literal text."),
    "paste": CommandInfo("agent_tty.cli.commands.paste", "Paste text (bracketed when the program enabled it)."),
    "send-keys": CommandInfo("agent_tty.cli.commands.send_keys", "Send named keys: Enter, Up, Ctrl+C, F5, ..."),
    "wait": CommandInfo("agent_tty.cli.commands.wait", "Wait for text, a regex, a still screen, silence or the exit."),
    "snapshot": CommandInfo("agent_tty.cli.commands.snapshot", "The screen as text or cells."),
    "screenshot": CommandInfo("agent_tty.cli.commands.screenshot", "A PNG of the screen."),
    "record": CommandInfo("agent_tty.cli.commands.record", "record export: an asciinema v2 file of the session."),
    "mark": CommandInfo("agent_tty.cli.commands.mark", "Put a labelled marker in the event log."),
    "version": CommandInfo("agent_tty.cli.commands.version", "Print the version."),
    "doctor": CommandInfo("agent_tty.cli.commands.doctor", "Check this machine: Python, PTYs, platform plugins, Home."),
    "platform": CommandInfo("agent_tty.cli.commands.doctor", "Show the platform plugins and the mechanism new sessions get."),
}

USAGE = """usage: agent-tty [--home PATH] [--json] COMMAND [ARGS]...

Real, long-lived terminals for AI agents.

Global options (before or after the command):
  --home PATH   the Home (else $AGENT_TTY_HOME, else ~/.agent-tty)
  --json        print one JSON envelope on stdout
  --as-owner    (root) act on another user's Home as its owner, for the whole command
  --version     print the version
  --help        this text; `agent-tty COMMAND --help` for a command

Commands:
"""


def _split_globals(argv: list[str]) -> list[str]:
    """Take --json, --home and --as-owner out of argv, anywhere before `--`."""
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i:])
            break
        if arg == "--json":
            GLOBALS.json = True
        elif arg == "--as-owner":
            GLOBALS.as_owner = True
        elif arg == "--home":
            if i + 1 >= len(argv):
                rest.append(arg)  # let the parser report the missing value
            else:
                GLOBALS.home = argv[i + 1]
                i += 1
        elif arg.startswith("--home="):
            GLOBALS.home = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    return rest


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = [f"  {name.ljust(width)}  {info.summary}" for name, info in COMMANDS.items()]
    return USAGE + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    GLOBALS.argv = list(args)
    rest = _split_globals(args)
    if not rest or rest[0] in ("-h", "--help", "help"):
        sys.stdout.write(_usage())
        return 0 if rest else 2
    if rest[0] in ("--version", "-V"):
        from agent_tty import __version__

        sys.stdout.write(f"agent-tty {__version__}\n")
        return 0
    name, command_args = rest[0], rest[1:]
    GLOBALS.command = name
    info = COMMANDS.get(name)
    if info is None:
        from agent_tty.protocol.errors import AgentTtyError, ErrorCode

        return emit_error(AgentTtyError(ErrorCode.USAGE, f"unknown command {name!r}; see `agent-tty --help`"))
    return _run(name, info, command_args)


def _run(name: str, info: CommandInfo, args: list[str]) -> int:
    import importlib

    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    try:
        if GLOBALS.as_owner:
            _become_owner()
        module = importlib.import_module(info.module)
        if hasattr(module, "fast_path"):
            handled = module.fast_path(args)
            if handled is not None:
                return handled
        return _run_command(name, info, module, args)
    except AgentTtyError as err:
        return emit_error(err)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as err:  # never a traceback to the user (CLI-CONTRACT.md)
        if os.environ.get("AGENT_TTY_DEBUG") == "1":
            raise
        return emit_error(
            AgentTtyError(
                ErrorCode.INTERNAL_ERROR,
                f"{type(err).__name__}: {err} (set AGENT_TTY_DEBUG=1 for the traceback)",
            )
        )


def _become_owner() -> None:
    from agent_tty.storage.home import resolve_home
    from agent_tty.storage.trust import become_owner, real_home

    become_owner(real_home(str(resolve_home(GLOBALS.home))))


def _run_command(name: str, info: CommandInfo, module: object, args: list[str]) -> int:
    import click

    from agent_tty.cli.parse import build
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    command = build(name, info.summary, getattr(module, "command"))
    try:
        result = command.main(args=args, prog_name=f"agent-tty {name}", standalone_mode=False)
    except click.exceptions.UsageError as err:
        return emit_error(AgentTtyError(ErrorCode.USAGE, err.format_message()))
    except click.exceptions.Abort:
        return 130
    except click.exceptions.Exit as err:
        return err.exit_code
    if isinstance(result, int):
        return result
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
