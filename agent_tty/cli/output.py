"""The JSON envelope and the human output; every command prints through here."""

from __future__ import annotations

import sys
TYPE_CHECKING = False  # not typing's: importing typing costs `version` several ms
if TYPE_CHECKING:
    from agent_tty.protocol.errors import AgentTtyError

# No json import here: `version` must start in a few ms (docs/adr/0003).


class Globals:
    """Options every command takes, before or after its name (parsed by cli.main)."""

    def __init__(self) -> None:
        self.json = False
        self.home: str | None = None
        self.as_owner = False
        self.command = ""
        self.argv: list[str] = []
        # How the session argument matched when it was a name or an id prefix (cli.resolve).
        self.resolved: dict[str, str] | None = None


GLOBALS = Globals()


def emit(result: dict[str, object], human: str | None = None) -> None:
    if GLOBALS.json:
        import json

        if GLOBALS.resolved is not None:
            result = {**result, "resolvedFrom": {"ref": GLOBALS.resolved["ref"], "by": GLOBALS.resolved["by"]}}
        document = {"ok": True, "command": GLOBALS.command, "result": result}
        sys.stdout.write(json.dumps(document, ensure_ascii=False, allow_nan=False) + "\n")
    elif human is not None:
        human = human.translate(_shown_controls())
        sys.stdout.write(human + ("" if human.endswith("\n") or not human else "\n"))
    sys.stdout.flush()


def note(text: str) -> None:
    """A line for the human beside a result (stderr, never with --json): what a script that
    reads stdout must not get mixed into it."""
    if not GLOBALS.json:
        sys.stderr.write(f"agent-tty {GLOBALS.command}: {text.translate(_shown_controls())}\n")


_SHOWN: dict[int, str] = {}


def _shown_controls() -> dict[int, str]:
    """Text for a human's terminal carries no control it would obey: every C0 control but tab and
    newline, DEL and every C1 control (U+009B is a CSI to some terminals) is shown as \\xNN. Our
    results already drop them; this holds for any text a program or a record put in one."""
    if not _SHOWN:
        for code in [*range(0x20), *range(0x7F, 0xA0)]:
            if code not in (0x09, 0x0A):
                _SHOWN[code] = f"\\x{code:02x}"
    return _SHOWN


def emit_error(err: AgentTtyError) -> int:
    if GLOBALS.json:
        import json

        document = {
            "ok": False,
            "command": GLOBALS.command,
            "error": {"code": err.code.value, "message": err.message, "details": err.details},
        }
        sys.stdout.write(json.dumps(document, ensure_ascii=False, allow_nan=False) + "\n")
        sys.stdout.flush()
    else:
        sys.stderr.write(f"agent-tty {GLOBALS.command}: error: {err.message} [{err.code.value}]\n".replace("agent-tty : ", "agent-tty: "))
    return int(err.exit_code)


def table(rows: list[list[str]], headers: list[str]) -> str:
    widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows)]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip() for row in [headers, *rows]]
    return "\n".join(lines)
