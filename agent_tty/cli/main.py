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

    __slots__ = ("module", "summary", "examples")

    def __init__(self, module: str, summary: str, *examples: str) -> None:
        self.module = module
        self.summary = summary
        self.examples = examples


COMMANDS: dict[str, CommandInfo] = {
    "create": CommandInfo(
        "agent_tty.cli.commands.create",
        "Start a program in a new session.",
        "agent-tty create -- bash",
        "agent-tty create --name build --cols 120 --rows 40 -- bash --norc",
        "agent-tty create --env TERM=dumb --idle-timeout 30m -- python3 -q",
    ),
    "list": CommandInfo(
        "agent_tty.cli.commands.list", "List sessions (active ones; --all for every one).", "agent-tty list", "agent-tty --json list --all"
    ),
    "inspect": CommandInfo("agent_tty.cli.commands.inspect", "Show a session's manifest and derived facts.", "agent-tty inspect ID"),
    "destroy": CommandInfo(
        "agent_tty.cli.commands.destroy",
        "End a session (--force: without its host).",
        "agent-tty destroy ID",
        "agent-tty destroy --force ID    # the host is wedged or gone",
    ),
    "gc": CommandInfo(
        "agent_tty.cli.commands.gc", "Remove the folders of ended sessions.", "agent-tty gc --dry-run", "agent-tty gc --older-than 1h"
    ),
    "resize": CommandInfo("agent_tty.cli.commands.resize", "Resize a session's terminal.", "agent-tty resize ID --cols 120 --rows 40"),
    "signal": CommandInfo(
        "agent_tty.cli.commands.signal",
        "Send a signal (INT/QUIT/TSTP: to the terminal's foreground job).",
        "agent-tty signal ID INT     # like ^C: the command the shell runs",
        "agent-tty signal ID TERM    # the program's process group",
    ),
    "run": CommandInfo(
        "agent_tty.cli.commands.run",
        "Type a shell command and wait until it completed.",
        "agent-tty run ID 'make test'",
        "agent-tty run ID 'npm start' --no-wait    # then: wait ID --text ready --output --after-seq SEQ",
        "agent-tty run ID --file steps.sh --timeout 5m",
    ),
    "type": CommandInfo(
        "agent_tty.cli.commands.type", "Type literal text.", "agent-tty type ID 'hello world'", "agent-tty type ID ':wq' && agent-tty send-keys ID Enter"
    ),
    "paste": CommandInfo(
        "agent_tty.cli.commands.paste", "Paste text (bracketed when the program enabled it).", "agent-tty paste ID --file snippet.py"
    ),
    "send-keys": CommandInfo(
        "agent_tty.cli.commands.send_keys",
        "Send named keys: Enter, Up, Ctrl+C, F5, ...",
        "agent-tty send-keys ID Enter",
        "agent-tty send-keys ID C-c",
        "agent-tty send-keys ID Escape : w q Enter",
        "agent-tty send-keys ID Ctrl+Left Shift+Home F5",
    ),
    "wait": CommandInfo(
        "agent_tty.cli.commands.wait",
        "Wait for text, a regex, a still screen, silence or the exit.",
        "agent-tty wait ID --text 'passed' --timeout 60s",
        "agent-tty wait ID --text READY --output --after-seq 12    # only what the program printed",
        "agent-tty wait ID --regex '\\$ $' --after-seq last",
        "agent-tty wait ID --screen-stable-ms 500",
        "agent-tty wait ID --exit --timeout 10s",
    ),
    "batch": CommandInfo(
        "agent_tty.cli.commands.batch",
        "Run input and wait steps in order; one record per step.",
        """agent-tty batch ID '[{"kind": "run", "command": "make"}, {"kind": "wait", "text": "Build finished"}]'""",
        "agent-tty batch ID --file steps.json --keep-going",
    ),
    "snapshot": CommandInfo(
        "agent_tty.cli.commands.snapshot",
        "The screen as text or cells.",
        "agent-tty snapshot ID",
        "agent-tty snapshot ID --scrollback",
        "agent-tty --json snapshot ID --format structured",
    ),
    "screenshot": CommandInfo("agent_tty.cli.commands.screenshot", "A PNG of the screen.", "agent-tty screenshot ID --out screen.png"),
    "record": CommandInfo(
        "agent_tty.cli.commands.record",
        "record export: an asciinema v2 file of the session, or its video (webm, mp4, gif).",
        "agent-tty record export ID --out session.cast",
        "agent-tty record export ID --format gif --speed 2 --out session.gif",
    ),
    "mark": CommandInfo("agent_tty.cli.commands.mark", "Put a labelled marker in the event log.", "agent-tty mark ID before-deploy"),
    "dashboard": CommandInfo(
        "agent_tty.cli.commands.dashboard",
        "Watch the sessions live, read-only (for a human in a split).",
        "agent-tty dashboard",
        "agent-tty dashboard --all --select build",
        "agent-tty dashboard --once --cols 100 --rows 30    # one frame to stdout",
    ),
    "mcp": CommandInfo(
        "agent_tty.cli.commands.mcp",
        "Serve this Home's sessions to an MCP client over stdio.",
        "agent-tty mcp",
        "agent-tty mcp --home /srv/agent-home",
    ),
    "version": CommandInfo("agent_tty.cli.commands.version", "Print the version.", "agent-tty version"),
    "doctor": CommandInfo(
        "agent_tty.cli.commands.doctor", "Check this machine: Python, PTYs, platform plugins, Home.", "agent-tty doctor", "agent-tty --json doctor"
    ),
    "platform": CommandInfo(
        "agent_tty.cli.commands.doctor", "Show the platform plugins and the mechanism new sessions get.", "agent-tty platform"
    ),
    "schema": CommandInfo(
        "agent_tty.cli.commands.schema",
        "The JSON Schema of every command's --json document.",
        "agent-tty schema",
        "agent-tty schema snapshot > snapshot.schema.json",
    ),
}

OTHER_JSON_COMMANDS = ("help", "install-completion")
"""Names an envelope carries that are not in COMMANDS: `--help` and `--install-completion`."""

USAGE = """usage: agent-tty [--home PATH] [--json] COMMAND [ARGS]...

Real, long-lived terminals for AI agents.

Global options (before or after the command):
  --home PATH   the Home (else $AGENT_TTY_HOME, else ~/.agent-tty)
  --json        print one JSON envelope on stdout
  --as-owner    (root) act on another user's Home as its owner, for the whole command
  --version     print the version
  --help        this text; `agent-tty COMMAND --help` for a command
  --show-completion [bash|zsh|fish], --install-completion [bash|zsh|fish]
                shell completion of commands, options and session ids

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
            if i + 1 >= len(argv) or argv[i + 1] == "--" or argv[i + 1] in COMMANDS:
                # `agent-tty --home list`: the command is not a path; say so instead of reading
                # it as the Home (or the Home's path as a command).
                raise _MissingHome()
            GLOBALS.home = argv[i + 1]
            i += 1
        elif arg.startswith("--home="):
            GLOBALS.home = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    return rest


class _MissingHome(Exception):
    """`--home` given without a path."""


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = [f"  {name.ljust(width)}  {info.summary}" for name, info in COMMANDS.items()]
    return USAGE + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    GLOBALS.argv = list(args)
    try:
        rest = _split_globals(args)
    except _MissingHome:
        return _usage_error("--home needs a path: agent-tty --home PATH COMMAND ...")
    if not rest:
        if GLOBALS.json:
            return _usage_error("no command given; see `agent-tty --help`")
        sys.stdout.write(_usage())
        return 2
    if rest[0] in ("-h", "--help", "help"):
        return _top_help()
    if rest[0] in ("__complete", "--show-completion", "--install-completion"):
        return _completion(rest[0], rest[1:])
    if rest[0] in ("--version", "-V"):
        rest = ["version", *rest[1:]]
    name, command_args = rest[0], rest[1:]
    GLOBALS.command = name
    info = COMMANDS.get(name)
    if info is None:
        import difflib

        close = difflib.get_close_matches(name, COMMANDS, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return _usage_error(f"unknown command {name!r}{hint} See `agent-tty --help`.")
    return _run(name, info, command_args)


def _completion(action: str, args: list[str]) -> int:
    from agent_tty.cli import complete

    if action == "__complete":
        return complete.main_complete(args, GLOBALS.home)
    # Named before the checks: its error envelope says which command failed, as its result does.
    GLOBALS.command = action.lstrip("-")
    shell = args[0] if args else complete.detect_shell()
    if shell not in complete.SHELLS or len(args) > 1:
        return _usage_error(f"{action} takes one of {', '.join(complete.SHELLS)} (default: from $SHELL)")
    script = complete.SCRIPTS[shell]
    if action == "--show-completion":
        sys.stdout.write(script)
        return 0
    from agent_tty.cli.output import emit

    target = complete.install_path(shell)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(script)
    after = {"bash": "open a new shell (bash-completion loads it)", "fish": "open a new shell",
             "zsh": "add `fpath=(~/.zfunc $fpath); autoload -Uz compinit && compinit` to ~/.zshrc if it is not there"}[shell]
    emit({"shell": shell, "path": str(target)}, f"installed {shell} completion in {target}; {after}")
    return 0


def _usage_error(message: str) -> int:
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    return emit_error(AgentTtyError(ErrorCode.USAGE, message))


def _top_help() -> int:
    GLOBALS.command = "help"
    if GLOBALS.json:
        from agent_tty.cli.output import emit

        commands = [{"name": name, "summary": info.summary} for name, info in COMMANDS.items()]
        emit({"usage": _usage(), "commands": commands})
    else:
        sys.stdout.write(_usage())
    return 0


def _run(name: str, info: CommandInfo, args: list[str]) -> int:
    try:
        if GLOBALS.as_owner:
            _become_owner()
        __import__(info.module)  # importlib.import_module's work without importing importlib (and warnings)
        module = sys.modules[info.module]
        if hasattr(module, "fast_path"):
            handled = module.fast_path(args)
            if handled is not None:
                return handled
        values = _fast_values(name, args)
        if values is None:
            return _run_command(name, info, module, args)
        result = module.command(**values)
        return result if isinstance(result, int) else 0
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as err:  # never a traceback to the user (CLI-CONTRACT.md)
        # Imported here: `version` never needs the error codes (their enum is ~1 ms of its start-up).
        from agent_tty.protocol.errors import AgentTtyError, ErrorCode

        if isinstance(err, AgentTtyError):
            return emit_error(err)
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


def _fast_values(name: str, args: list[str]) -> dict[str, object] | None:
    """The command's arguments read without click (agent_tty/cli/fastparse.py), or None when
    click must read them: help, a usage error, anything the fast reader does not take."""
    from agent_tty.cli.argtable import TABLE
    from agent_tty.cli.fastparse import parse

    values = parse(TABLE[name], args)
    if values is None:
        return None
    from agent_tty.cli.resolve import resolve_arguments

    return resolve_arguments(values)


def _run_command(name: str, info: CommandInfo, module: object, args: list[str]) -> int:
    import click

    from agent_tty.cli.parse import build
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    command = build(name, info.summary, module.command, examples=info.examples)
    options = args[: args.index("--")] if "--" in args else args
    if GLOBALS.json and ("-h" in options or "--help" in options):
        from agent_tty.cli.output import emit

        with click.Context(command, info_name=f"agent-tty {name}") as ctx:
            emit({"usage": command.get_help(ctx), "summary": info.summary, "examples": list(info.examples)})
        return 0
    try:
        result = command.main(args=args, prog_name=f"agent-tty {name}", standalone_mode=False)
    except click.exceptions.NoSuchOption as err:
        return emit_error(AgentTtyError(ErrorCode.USAGE, err.format_message() + _option_hint(name)))
    except click.exceptions.UsageError as err:
        return emit_error(AgentTtyError(ErrorCode.USAGE, err.format_message()))
    except click.exceptions.Abort:
        return 130
    except click.exceptions.Exit as err:
        return err.exit_code
    if isinstance(result, int):
        return result
    return 0


def _option_hint(name: str) -> str:
    """What a mistaken option usually means for this command."""
    if name == "create":
        return " The program and its arguments go after `--`: agent-tty create [OPTIONS] -- PROGRAM [ARGS]..."
    if name in ("send-keys", "type", "run", "paste"):
        return " Text that starts with '-' goes after `--`: agent-tty " + name + " ID -- TEXT"
    return ""


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
