"""What `run` checks before it types: a line its completion marker can follow, typed to a shell.

`run` appends `; printf '\\033]7770;…' TOKEN $?` to COMMAND's last line. Two cases can never
complete, and would wait the whole timeout: a last line that ends in a `#` comment (the marker
becomes part of the comment), and a session whose own program, in the terminal's foreground,
is not a shell (`create -- python3 -q`: Python gets `; printf …` as a SyntaxError). Both are
refused at once, naming `type`/`send-keys` + `wait`. A job of a shell in the foreground is not
judged: it may end a moment later, and what `run` types ahead is then the shell's.
"""

from __future__ import annotations

from agent_tty.protocol.errors import AgentTtyError, ErrorCode

_WORD_BREAKS = frozenset(" \t;&|()<>")
"""Characters after which `#` starts a comment in sh (a `#` inside a word is a character)."""

NOT_SHELLS = frozenset({
    "ipython", "node", "deno", "bun", "irb", "ruby", "perl", "php", "psql", "mysql", "mariadb",
    "sqlite3", "redis-cli", "mongosh", "mongo", "vim", "nvim", "vi", "view", "emacs", "nano",
    "less", "more", "most", "man", "top", "htop", "btop", "ghci", "R", "julia", "lua", "luajit",
    "fish", "nu", "pwsh", "iex", "erl", "ocaml", "utop", "scala", "gdb", "lldb", "bc", "dc",
    "tclsh", "guile", "racket", "sbcl", "elvish", "xonsh", "ed", "cat",
})  # fmt: skip
"""Programs that read the line as something else than a POSIX shell would. Anything not named
here (a shell, ssh, sudo, docker exec, tmux, an unknown program) is typed to as before: a
carrier of a remote or nested shell must keep working."""


def ends_in_comment(command: str) -> bool:
    """Whether `command` ends inside a sh comment: its last line's, found as sh finds it (quotes,
    also ones that span lines, and backslashes honoured; a newline outside quotes ends one)."""
    quote: str | None = None
    escaped = in_comment = False
    previous = " "
    for char in command:
        if in_comment:
            in_comment = char != "\n"
        elif escaped:
            escaped = False
        elif quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            escaped = True
        elif quote == '"':
            quote = None if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and previous in _WORD_BREAKS or char == "#" and previous == "\n":
            in_comment = True
        previous = char
    return in_comment


def not_a_shell(name: str | None) -> bool:
    if name is None:
        return False
    return name in NOT_SHELLS or name.startswith(("python", "pypy"))


def check_run_line(command: str, foreground: str | None) -> None:
    """INVALID_INPUT for a run that could never complete; nothing is typed then."""
    if not_a_shell(foreground):
        raise AgentTtyError(
            ErrorCode.INVALID_INPUT,
            f"run needs a POSIX shell at a prompt, and this session's program is {foreground}: "
            "use `type` (or `send-keys`) and then `wait` instead",
            foreground=foreground,
        )
    if ends_in_comment(command):
        raise AgentTtyError(
            ErrorCode.INVALID_INPUT,
            "the command's last line ends in a # comment, which would swallow run's completion marker: "
            "remove the comment, or use `type` and then `wait`",
        )
