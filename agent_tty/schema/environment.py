"""Results of the commands about this machine and the CLI itself: version, doctor, platform,
help, install-completion, schema."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import RootModel

from agent_tty.schema.base import Model, absent, doc


class VersionResult(Model):
    version: str = doc("agent-tty's version.")
    python: str = doc("The Python version it runs on.")


class McpResult(Model):
    """`agent-tty mcp` prints no result: its stdout is the MCP stream until the client closes it.
    With --json, only its `--help` answer and its errors are envelopes."""


class Pty(Model):
    ok: bool = doc("Whether this process can open a terminal for a program.")
    reason: str = absent("Why not (absent when ok).")


class HomeReport(Model):
    path: str = doc("The Home's path.")
    exists: bool = doc("Whether it exists (commands create it on first use).")
    mode: str = absent("Its permissions: the mode bits in octal (POSIX), its security descriptor in SDDL (Windows); absent when it does not exist.")
    owner: int | str = absent("The owner: a uid (POSIX) or a SID (Windows); absent when it does not exist.")
    ownedByMe: bool | None = absent("Whether this user owns it; null where the system cannot tell (absent when it does not exist).")
    private: bool = absent("Whether no other user may read it (absent when it does not exist).")
    writable: bool = absent("Whether this user may write it (absent when it does not exist).")
    trusted: bool = doc("Whether commands trust it; false: they refuse it with UNSAFE_HOME.")
    problem: str = absent("Why it is not trusted, a stable word (absent when trusted).")
    refusal: str = absent("The refusal other commands print (absent when trusted).")


class PluginReport(Model):
    name: str = doc("The platform plugin.")
    usable: bool = doc("Whether its probe says it works here.")
    rank: int = doc("Higher wins among usable plugins.")
    reason: str = doc("What its probe found.")
    notChosenBecause: str = absent("Why new sessions do not get it (absent for the chosen one).")


class Pinned(Model):
    mechanism: str = doc("The pinned mechanism.")
    by: str = doc("Where it is pinned: AGENT_TTY_MECHANISM or the Home's config.json.")


class ScreenReport(Model):
    backend: Literal["ghostty", "pyte"] = doc("The screen engine new sessions get.")
    forcedBy: str | None = doc("The environment variable that chose it, else null.")
    error: str | None = doc("Why the engine does not load, else null.")
    note: str | None = doc("What to know about it (pyte's limits), else null.")


class FontReport(Model):
    font: str = doc("The font's name.")
    package: str = doc("The Python package that ships it: `agent_tty.fonts` for the fonts agent-tty ships.")
    installed: bool = doc("Whether it is there: a shipped font's file, another font's package.")


class VideoFormats(Model):
    gif: bool = doc("gif: always (Pillow, a dependency).")
    webm: bool = doc("webm (VP9): with PyAV, the `video` extra.")
    mp4: bool = doc("mp4 (H.264): with PyAV, the `video` extra.")


class VideoReport(Model):
    formats: VideoFormats = doc("The video formats `record export` can write here.")
    pyav: str | None = doc("PyAV's version, null when it is not installed.")
    install: str | None = doc("What to run for webm and mp4 (`pip install 'agent-tty[video]'`), null when they work.")


class Disk(Model):
    freeBytes: int = doc("Free bytes on the Home's file system.")
    totalBytes: int = doc("Size of the Home's file system.")
    nearlyFull: bool = doc("Whether it is nearly full (event logs drop output).")


class DoctorResult(Model):
    """`doctor` and `platform` answer the same document; exit 1 when something does not work."""

    python: str = doc("The Python version.")
    executable: str = doc("The Python interpreter.")
    platform: str = doc("sys.platform.")
    pty: Pty = doc("Whether PTYs work.")
    home: HomeReport = doc("The Home and the trust verdict commands apply to it.")
    socketDir: str = doc("Where session sockets go, or `none: <why>`.")
    transport: str = doc("What new hosts serve their session on: `unix` or `loopback` (docs/adr/0021), or `none: <why>`.")
    plugins: list[PluginReport] = doc("Every platform plugin and its probe.")
    pinned: Pinned | None = doc("The pinned mechanism, else null.")
    mechanism: str | None = doc("The mechanism new sessions get, null when none works.")
    mechanismError: str | None = doc("Why no mechanism works, else null.")
    screen: ScreenReport = doc("The screen engine.")
    fonts: dict[str, FontReport] = doc("Screenshot fonts by role: primary, text, symbols, emoji, cjk.")
    video: VideoReport = doc("What `record export` needs for video (webm, mp4, gif) and whether it is there.")
    disk: Disk | None = doc("The Home's file system, null where it cannot be read.")
    warnings: list[str] = doc("What a person should act on (a nearly full disk, an incomplete event log).")


class CommandSummary(Model):
    name: str = doc("The command.")
    summary: str = doc("What it does, in one line.")


class HelpResult(Model):
    """`agent-tty --json --help` (the envelope's command is `help`)."""

    usage: str = doc("The top-level help text.")
    commands: list[CommandSummary] = doc("Every command with its summary.")


class CommandHelp(Model):
    """`agent-tty --json COMMAND --help`: any command's result may be this instead."""

    usage: str = doc("The command's help text.")
    summary: str = doc("What the command does, in one line.")
    examples: list[str] = doc("Example command lines.")


class CompletionInstalled(Model):
    """`agent-tty --json --install-completion [SHELL]` (the envelope's command is `install-completion`)."""

    shell: Literal["bash", "zsh", "fish"] = doc("The shell.")
    path: str = doc("The completion script written.")


class SchemaResult(RootModel[dict[str, Any]]):
    """`agent-tty schema`: the JSON Schema of every command's envelope keyed by command name;
    `schema COMMAND`: that command's envelope schema."""
