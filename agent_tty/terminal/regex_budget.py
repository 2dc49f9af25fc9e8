"""A time budget for one evaluation of a user's pattern (`wait --text/--regex`).

Python's `re` backtracks: `(a+)+$` against 27 `a` and a `!` runs for minutes, and the host is
single-threaded, so one such wait would stall every command of its session. sre checks for
signals while it matches, so a one-shot SIGVTALRM timer (CPU time) whose handler raises stops a runaway
match at the budget (ADR 0014). google-re2 has no such case, but its syntax is not Python's
(no backreferences, no lookaround) and it has no wheel for every platform we support.

A signal reaches the main thread only. Elsewhere (an MCP server's worker, a library user's
thread judging an ended session's log) the pattern runs in a child interpreter that is ended
through its own handle once the budget (and its start-up) has passed.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from agent_tty.protocol.errors import AgentTtyError, ErrorCode

REGEX_BUDGET_S = 0.25
"""The longest one evaluation of a pattern over the screen (or the output) may take."""
CHILD_START_S = 2.0
"""What a child interpreter may take to start, on top of the budget (wall time, a loaded machine)."""
_CHILD = """import json, re, sys
sys.stdin.reconfigure(encoding="utf-8", errors="surrogatepass")
source, flags, what = json.loads(sys.stdin.readline())
pattern = re.compile(source, flags)
text = sys.stdin.read()
def span(start, end):
    stop = text.find("\\n", end)
    return [text.rfind("\\n", 0, start) + 1, len(text) if stop < 0 else stop]
if what == "spans":
    print(json.dumps([span(m.start(), m.end()) for m in pattern.finditer(text)]))
else:
    print(int(pattern.search(text) is not None))
"""
"""The child reads its pattern as one JSON line on stdin, then the text: never through argv,
which every local user reads in `ps` and which cannot hold a NUL or more than ~128 KiB."""


class _Expired(Exception):
    pass


_armed = False
_installed = False


def _on_alarm(_signum: int, _frame: FrameType | None) -> None:
    # Raise only inside a guarded evaluation: an alarm that lands just after one ended is a no-op.
    if _armed:
        raise _Expired


def _off_main_thread() -> bool:
    """Signal handlers run in the main thread only: elsewhere a pattern runs in a child."""
    return threading.current_thread() is not threading.main_thread()


def _can_guard() -> bool:
    """Not every platform has SIGVTALRM (Windows)."""
    return hasattr(signal, "SIGVTALRM") and not _off_main_thread()


@contextmanager
def _budget(pattern: re.Pattern[str], seconds: float) -> Iterator[None]:
    global _armed, _installed
    if not _can_guard():
        yield
        return
    if not _installed:
        # Installed once and kept: restoring the old handler could let a late alarm kill us.
        signal.signal(signal.SIGVTALRM, _on_alarm)
        _installed = True
    try:
        # CPU time of this process, not wall time: a loaded machine or a host that was
        # stopped and resumed does not fail a pattern that is not itself slow.
        _armed = True
        signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
        yield
    except _Expired:
        raise too_slow(pattern, seconds) from None
    finally:
        _armed = False
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)


def too_slow(pattern: re.Pattern[str], seconds: float = REGEX_BUDGET_S) -> AgentTtyError:
    budget_ms = round(seconds * 1000)
    return AgentTtyError(
        ErrorCode.INVALID_INPUT,
        f"the pattern {pattern.pattern!r} took more than {budget_ms} ms in one search of the screen or output "
        "(its backtracking explodes on this text): simplify it, e.g. (a+)+ -> a+",
        pattern=pattern.pattern,
        budgetMs=budget_ms,
    )


def _in_child(what: str, pattern: re.Pattern[str], text: str, seconds: float) -> Any:
    """`count` or `search` in a child interpreter (-I -S: nothing of ours or the site's is
    imported), ended through its Popen handle past the budget: a thread has no signal to stop
    a runaway match with."""
    import json
    import subprocess
    import sys

    argv = [sys.executable, "-I", "-S", "-c", _CHILD]
    # ensure_ascii: a pattern's lone surrogate or newline travels as a JSON escape on one line.
    header = json.dumps([pattern.pattern, int(pattern.flags), what]) + "\n"
    child = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        encoding="utf-8", errors="surrogatepass",
    )  # fmt: skip
    try:
        out, _ = child.communicate(header + text, timeout=seconds + CHILD_START_S)
    except subprocess.TimeoutExpired:
        child.kill()  # our own child, not yet reaped: its pid is still its own
        child.communicate()
        raise too_slow(pattern, seconds) from None
    try:
        return json.loads(out)
    except ValueError:
        raise AgentTtyError(
            ErrorCode.INTERNAL_ERROR, f"the pattern {pattern.pattern!r} could not be judged (exit {child.returncode})"
        ) from None


def matched_lines(pattern: re.Pattern[str], text: str, seconds: float = REGEX_BUDGET_S) -> list[tuple[int, int]]:
    """Each match of `pattern` in `text`, as the span of the whole lines it covers (start, end
    offsets: a wait's `--after-seq` compares those lines with the screen's at that seq);
    INVALID_INPUT past the budget."""
    if _off_main_thread():
        return [(start, end) for start, end in _in_child("spans", pattern, text, seconds)]
    with _budget(pattern, seconds):
        return [_line_span(text, match.start(), match.end()) for match in pattern.finditer(text)]


def _line_span(text: str, start: int, end: int) -> tuple[int, int]:
    stop = text.find("\n", end)
    return text.rfind("\n", 0, start) + 1, len(text) if stop < 0 else stop


def search(pattern: re.Pattern[str], text: str, seconds: float = REGEX_BUDGET_S) -> bool:
    """Whether `pattern` matches somewhere in `text`; INVALID_INPUT past the budget."""
    if _off_main_thread():
        return bool(_in_child("search", pattern, text, seconds))
    with _budget(pattern, seconds):
        return pattern.search(text) is not None
