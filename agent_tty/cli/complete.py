"""Shell completion: the scripts (`--show-completion`, `--install-completion`) and the candidates
they ask for (`agent-tty __complete WORD...`, one per line).

The scripts call back into agent-tty, so a completion always matches the installed commands and
the Home's sessions. Session ids come from the names of the Home's session folders: completion
reads no record (a record is data, and a completion must stay fast).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

GLOBAL_OPTIONS = ["--home", "--json", "--as-owner", "--help", "--version"]
SHELLS = ("bash", "zsh", "fish")

_BASH = r"""# agent-tty completion for bash (agent-tty --show-completion bash)
_agent_tty_complete() {
    local IFS=$'\n' current="${COMP_WORDS[COMP_CWORD]}"
    COMPREPLY=($(compgen -W "$(agent-tty __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)" -- "$current"))
}
complete -o default -F _agent_tty_complete agent-tty
"""
_ZSH = "#compdef agent-tty\n# agent-tty completion for zsh (agent-tty --show-completion zsh)\n" \
    "autoload -U +X bashcompinit && bashcompinit\n" + _BASH.split("\n", 1)[1]
_FISH = """# agent-tty completion for fish (agent-tty --show-completion fish)
complete -c agent-tty -f -a '(agent-tty __complete (commandline -opc)[2..-1] 2>/dev/null)'
"""
SCRIPTS = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH}


def detect_shell() -> str:
    name = Path(os.environ.get("SHELL", "bash")).name
    return name if name in SHELLS else "bash"


def install_path(shell: str) -> Path:
    """Where each shell loads completions from by itself (no rc file is edited)."""
    home = Path.home()
    data = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    if shell == "fish":
        return config / "fish" / "completions" / "agent-tty.fish"
    if shell == "zsh":
        return home / ".zfunc" / "_agent-tty"
    return data / "bash-completion" / "completions" / "agent-tty"


def candidates(words: list[str], home: str | None) -> list[str]:
    """What may come next after `words` (the command line after `agent-tty`, without the word
    being completed)."""
    from agent_tty.cli.main import COMMANDS

    command, after, index = None, [], 0
    while index < len(words):
        word = words[index]
        if word == "--home":
            index += 2
            continue
        if word.startswith("--home="):
            home = word.split("=", 1)[1]
        elif not word.startswith("-") and command is None:
            command, after = word, words[index + 1 :]
            break
        index += 1
    if command is None:
        return [*COMMANDS, *GLOBAL_OPTIONS]
    info = COMMANDS.get(command)
    if info is None:
        return []
    import importlib

    from agent_tty.cli.parse import build

    click_command = build(command, info.summary, importlib.import_module(info.module).command)
    options = [decl for p in click_command.params if p.param_type_name == "option" for decl in p.opts if decl.startswith("--")]
    takes_value = {decl for p in click_command.params if p.param_type_name == "option" and not getattr(p, "is_flag", False) for decl in p.opts}
    if after and after[-1] in takes_value:
        return []  # the shell completes the option's value (a path, a number)
    if "--" in after:
        return []
    positional = [w for i, w in enumerate(after) if not w.startswith("-") and (i == 0 or after[i - 1] not in takes_value)]
    arguments = [p for p in click_command.params if p.param_type_name == "argument"]
    nxt = arguments[len(positional)].name if len(positional) < len(arguments) else None
    if command == "record" and not positional:
        return ["export", *options, "--help"]
    if command == "schema" and not positional:
        from agent_tty.cli.main import OTHER_JSON_COMMANDS

        return [*COMMANDS, *OTHER_JSON_COMMANDS, *options, "--help"]
    if nxt == "session_id":
        return [*_session_ids(home), *options, "--help"]
    return [*options, "--help"]


def _session_ids(home: str | None) -> list[str]:
    """The Home's session ids, then the names of its sessions (read from their manifests, each
    checked as every read is; one that cannot be read offers only its id)."""
    from agent_tty.storage.files import read_record
    from agent_tty.storage.home import Home, resolve_home
    from agent_tty.storage.records import Manifest

    try:
        store = Home(resolve_home(home))
        ids = store.session_ids()
    except Exception:  # noqa: BLE001 - a completion never fails the shell; an unreadable Home offers nothing
        return []
    names: list[str] = []
    for session_id in ids:
        try:
            name = read_record(store.session(session_id).manifest, Manifest).name
        except Exception:  # noqa: BLE001, S112 - a record that cannot be read offers no name
            continue
        if name and name not in names and name not in ids:
            names.append(name)
    return [*ids, *names]


def main_complete(words: list[str], home: str | None) -> int:
    sys.stdout.write("".join(f"{word}\n" for word in candidates(words, home)))
    return 0
