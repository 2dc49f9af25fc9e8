"""Turns a TLC counterexample into numbered plain-words steps: `python model/story.py RUN_FOLDER`."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Safety violations print the first; liveness ones (not used by the model so far) the second.
TRACE_STARTS = (
    "Error: The behavior up to this point is:",
    "Error: The following behavior constitutes a counter-example:",
)
VIOLATED = re.compile(r"Error: Invariant (\w+) is violated")
# TLC state headers: "State 2: <Poll line 3, col 1 ...>", "State 5: Stuttering",
# "Back to state 2: <Poll ...>" (some TLC versions put "N: " before the latter).
HEADER = re.compile(r"^(?:\d+: )?(State|Back to state) (\d+): ?(.*)$")
VAR_START = re.compile(r"^(?:/\\ )?([A-Za-z_][A-Za-z0-9_]*) = (.*)$")
WIDTH = 160
CONTEXT = 30  # characters kept either side of where a long value changed
STUTTERING = "Stuttering"


@dataclass
class State:
    """One state block of a trace: what TLC says led to it and its variables, in TLC's order."""

    number: int
    action: str
    back_to: int | None = None  # set for "Back to state N": the state equals state N
    variables: dict[str, str] = field(default_factory=dict)


def extract_trace(tlc_output: str) -> str:
    """The counterexample part of TLC's output: its start line to the end of the last state block."""
    lines = tlc_output.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(TRACE_STARTS)]
    if not starts:
        return ""
    body = lines[starts[-1] :]
    headers = [i for i, line in enumerate(body) if HEADER.match(line)]
    if not headers:
        return body[0] + "\n"
    end = headers[-1] + 1
    while end < len(body) and _in_state_block(body[end]):
        end += 1
    return "\n".join(body[:end]) + "\n"


def _in_state_block(line: str) -> bool:
    """A variable line at column 0 or an indented continuation of a value."""
    return bool(line.strip()) and (line[0].isspace() or VAR_START.match(line) is not None)


def violated_invariant(tlc_output: str) -> str | None:
    """The invariant TLC reports violated, if any."""
    found = VIOLATED.search(tlc_output)
    return found.group(1) if found else None


def action_name(header_rest: str) -> str:
    """The action of a header's text after "State N: ": the first word inside <...>."""
    rest = header_rest.strip()
    if rest.startswith("<"):
        words = rest[1:].rstrip(">").split()
        return words[0].rstrip(">") if words else "?"
    return rest.split()[0] if rest else "?"


def parse_states(trace_text: str) -> list[State]:
    """Every state block of a trace, variables' multi-line values kept as their raw lines joined."""
    states: list[State] = []
    current_var: str | None = None
    for line in trace_text.splitlines():
        header = HEADER.match(line)
        if header:
            kind, number, rest = header.groups()
            back_to = int(number) if kind == "Back to state" else None
            states.append(State(len(states) + 1, action_name(rest), back_to))
            current_var = None
            continue
        if not states or not line.strip():
            current_var = None  # a blank line ends a state block; text before the first header is not one
            continue
        var = VAR_START.match(line)
        if var and not line[0].isspace():  # a new variable starts at column 0; values continue indented
            current_var = var.group(1)
            states[-1].variables[current_var] = var.group(2)
        elif current_var is not None:
            states[-1].variables[current_var] += "\n" + line
    return _fill_back_to(states)


def _fill_back_to(states: list[State]) -> list[State]:
    """A "Back to state N" or stuttering block prints no variables: it equals state N or the last one."""
    for i, state in enumerate(states):
        if state.variables or i == 0:
            continue
        source = states[state.back_to - 1] if state.back_to and state.back_to <= i else states[i - 1]
        state.variables = dict(source.variables)
    return states


def action_names(trace_text: str) -> list[str]:
    """One action name per state, in order (the first is "Initial")."""
    return [state.action for state in parse_states(trace_text)]


def compact(value: str) -> str:
    """A value on one line: continuation lines joined by single spaces."""
    return " ".join(part.strip() for part in value.splitlines() if part.strip())


def shorten(value: str, width: int = WIDTH) -> str:
    return value if len(value) <= width else value[: width - 3] + "..."


def change(old: str, new: str, width: int = WIDTH) -> tuple[str, str]:
    """Old and new value cut to width around where they differ, so a big record shows its changed part."""
    if len(old) <= width and len(new) <= width:
        return old, new
    shortest = min(len(old), len(new))
    prefix = 0
    while prefix < shortest and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    start = max(0, prefix - CONTEXT)

    def cut(value: str) -> str:
        end = min(len(value), len(value) - suffix + CONTEXT)
        return ("..." if start else "") + value[start:end] + ("..." if end < len(value) else "")

    return shorten(cut(old), width), shorten(cut(new), width)


def render(trace_text: str, labels: dict[str, str], violated: str | None = None) -> str:
    """Numbered steps: each action's plain words, then the variables it changed as old -> new."""
    states = parse_states(trace_text)
    if not states:
        return "(no counterexample states found)\n"
    out = [f"Start: {labels.get(states[0].action, 'initial state')}"]
    out += [f"   {name} = {shorten(compact(value))}" for name, value in states[0].variables.items()]
    for step, (before, after) in enumerate(zip(states, states[1:]), start=1):
        out.append(f"{step}. {_step_title(after, labels)}")
        out += _changes(before, after)
    if violated:
        out.append(f"After step {len(states) - 1}, invariant {violated} is violated.")
    return "\n".join(out) + "\n"


def _step_title(state: State, labels: dict[str, str]) -> str:
    title = labels.get(state.action, state.action)
    if state.back_to is not None:
        return f"{title} (back to the state after step {state.back_to - 1}: the behavior loops)"
    if state.action == STUTTERING:
        return "nothing changes from here on (stuttering)"
    return title


def _changes(before: State, after: State) -> list[str]:
    lines = []
    for name, value in after.variables.items():
        old, new = compact(before.variables.get(name, "?")), compact(value)
        if old != new:
            old, new = change(old, new)
            lines.append(f"   {name}: {old} -> {new}")
    return lines or ["   (no variable changed)"]


def load_labels(model_dir: Path) -> dict[str, str]:
    """LABELS from model_dir/labels.py (action name -> plain words), or {} if there is no such file."""
    path = model_dir / "labels.py"
    if not path.exists():
        return {}
    spec = importlib.util.spec_from_file_location("agent_tty_model_labels", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    labels = getattr(module, "LABELS", {})
    if not isinstance(labels, dict):
        raise TypeError(f"{path}: LABELS is not a dict")
    return {str(key): str(value) for key, value in labels.items()}


def story_of_folder(run_folder: Path, labels: dict[str, str]) -> str:
    """The story of a run folder: its trace.txt, or the trace inside its tlc.out."""
    tlc_out = run_folder / "tlc.out"
    output = tlc_out.read_text(errors="replace") if tlc_out.exists() else ""
    trace_file = run_folder / "trace.txt"
    trace = trace_file.read_text(errors="replace") if trace_file.exists() else extract_trace(output)
    return render(trace, labels, violated_invariant(output))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python model/story.py RUN_FOLDER", file=sys.stderr)
        return 2
    model_dir = Path(os.environ.get("CHECK_MODEL_DIR") or Path(__file__).resolve().parent)
    print(story_of_folder(Path(argv[0]), load_labels(model_dir)), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
