"""When `run` types: once the shell reads its line, so that the line is echoed once (ADR 0031).

A line typed while the terminal still echoes by itself (canonical mode: the shell is sourcing
its `.bashrc`, running `PROMPT_COMMAND`, or running the previous command) is echoed twice: at
once by the kernel, and again by the shell's line editor (readline, ZLE) when it reads it after
its prompt. The echo filter can hide the marker in one of them only. So a `run` waits, in the
host, until the terminal's ECHO is off (a line editor is reading) for a shell that edits lines,
and types at once where the kernel's echo is the only one (dash, `bash --noediting`).
"""

from __future__ import annotations

import os

LINE_EDITORS = frozenset({"bash", "rbash", "zsh", "ksh", "ksh93", "mksh", "oksh", "tcsh", "yash", "osh"})
"""Shells that draw their own echo by default: their first run waits for the editor."""
EDITOR_GRACE_S = 10.0
"""How long a first run waits for the line editor of a shell named above before it types in
canonical mode anyway (`bash --noediting` pays this once; then the host knows)."""
POLL_S = 0.005
"""How often a held run looks at the terminal's modes."""


class LineReader:
    """What the host has learned about whether the session's shell edits lines."""

    def __init__(self, program: str | None) -> None:
        name = os.path.basename(program or "").lstrip("-")
        self.expected = name in LINE_EDITORS
        self.edits: bool | None = None
        """True once the terminal was seen with ECHO off while the shell itself held it; False
        once a grace passed with the shell holding a terminal that echoes."""

    def reads(self, echoes: bool | None, own_foreground: bool, waited_s: float) -> bool:
        """Whether a line typed now is echoed once: `echoes` is the terminal's ECHO (None:
        unknown), `own_foreground` whether the session's program (not a job of it) holds it."""
        if echoes is None:
            return True
        if not echoes:
            if own_foreground:
                self.edits = True
            return True
        if self.edits:
            return False  # the editor comes back once the shell is done: wait for it
        if self.edits is None and self.expected:
            if waited_s < EDITOR_GRACE_S:
                return False
            if own_foreground:
                self.edits = False
        return True


class HeldRun:
    """A `run` whose line waits for the shell to read it."""

    __slots__ = ("conn", "command", "postamble", "token", "wait", "deadline", "since")

    def __init__(self, conn: object, command: str, postamble: str, token: str, wait: bool, deadline: float | None, since: float) -> None:
        self.conn, self.command, self.postamble, self.token = conn, command, postamble, token
        self.wait, self.deadline, self.since = wait, deadline, since
