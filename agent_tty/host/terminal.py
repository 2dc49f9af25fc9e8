"""The host's live screen and the waits that watch it."""

from __future__ import annotations

import re
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any

from agent_tty.terminal.output import OutputSearch
from agent_tty.terminal.screen import Reply, Screen, SearchText, open_screen, screen_hash, search_text

PENDING_LIMIT = 4 << 20
"""Output kept before the screen exists; past this the screen is built at once."""
BASELINES_KEPT = 16
RUN_MARKER = re.compile(rb"\x1b\]7770;([0-9a-f]{12});(\d{1,3})\x07")
"""The hidden completion marker of `run`: an OSC no terminal draws, printed after the command."""


class LiveScreen:
    """Built lazily (importing pyghostty costs ~155 ms, which create must not wait for): right
    after the host's first reply (create's readiness), at the first idle moment of the loop,
    or when a command needs it, whichever comes first."""

    def __init__(self, cols: int, rows: int, reply: Reply) -> None:
        self.cols, self.rows = cols, rows
        self._reply = reply
        self._screen: Screen | None = None
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self.baselines: OrderedDict[int, str] = OrderedDict()

    @property
    def built(self) -> bool:
        return self._screen is not None

    def screen(self) -> Screen:
        if self._screen is None:
            screen = open_screen(self.cols, self.rows, self._reply)
            for chunk in self._pending:
                screen.feed(chunk)
            self._pending.clear()
            self._screen = screen
        return self._screen

    def feed(self, data: bytes) -> None:
        if self._screen is not None:
            self._screen.feed(data)
            return
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes > PENDING_LIMIT:
            self.screen()

    def resize(self, cols: int, rows: int) -> None:
        self.cols, self.rows = cols, rows
        if self._screen is not None:
            self._screen.resize(cols, rows)
        else:
            # Later output was drawn at the new size: build now so the order is kept.
            self.screen().resize(cols, rows)

    def search_text(self) -> SearchText:
        return search_text(self.screen())

    def remember(self, seq: int) -> None:
        """The screen as it was at an input or mark: the baseline of a later wait."""
        self.baselines[seq] = self.search_text()
        while len(self.baselines) > BASELINES_KEPT:
            self.baselines.popitem(last=False)

    def baseline(self, after_seq: int | str | None) -> SearchText | None:
        """The screen at the latest remembered input or mark at or before `after_seq`
        (`last`: the latest of all); None when there is none."""
        if after_seq is None or (after_seq == "last" and not self.baselines):
            return None
        if after_seq == "last":
            return next(reversed(self.baselines.values()))
        if not isinstance(after_seq, int):
            return None
        chosen = None
        for seq, text in self.baselines.items():
            if seq <= after_seq:
                chosen = text
        return chosen


@dataclass
class Wait:
    """One `wait` (or `run`) a client holds the connection for."""

    conn: Any
    kind: str  # text | regex | stable | idle | exit | run
    deadline: float | None
    pattern: re.Pattern[str] | None = None
    baseline: list[Counter[tuple[int, str]]] = field(default_factory=list)
    """`--after-seq`: the lines the pattern matched on the screen at that seq, in each form."""
    quiet_s: float = 0.0
    token: str | None = None
    seq: int | None = None
    started: float = field(default_factory=time.monotonic)
    last_hash: str | None = None
    last_change: float = field(default_factory=time.monotonic)
    search: OutputSearch | None = None
    """`wait --output`: the pattern over the program's output, not over the screen."""
    output_start: int | None = None
    """`wait --output`: where the output its result carries starts (the stream offset)."""
    echoes: tuple[str, ...] = ()
    """A multi-line `run`: its lines after the first, whose echoes its output leaves out."""

    def set_baseline(self, screen: SearchText | None) -> None:
        assert self.pattern is not None
        self.baseline = baseline_of(self.pattern, screen)

    def matches(self, screen: SearchText) -> bool:
        """INVALID_INPUT past the budget (regex_budget)."""
        assert self.pattern is not None
        return matches_since(self.pattern, screen, self.baseline)


MatchKey = tuple[int, str]
"""A match as `--after-seq` compares it: the cursor's row (counted from the top of the
scrollback) when the match covers it, else -1; and the lines it covers, without trailing blanks."""


def match_keys(pattern: re.Pattern[str], screen: SearchText, text: str) -> Counter[MatchKey]:
    """INVALID_INPUT past the budget (regex_budget). Each line span is read once, however many
    matches share it (`.` over a long scrollback)."""
    from agent_tty.terminal.regex_budget import matched_lines

    spans = Counter(matched_lines(pattern, text))
    cursor_end = text.find("\n", screen.cursor_at) if screen.cursor_at >= 0 else -1
    cursor_end = len(text) if cursor_end < 0 else cursor_end
    keys: Counter[MatchKey] = Counter()
    for (start, end), times in spans.items():
        covers = screen.cursor_at >= 0 and start <= cursor_end and end >= screen.cursor_at
        lines = "\n".join(line.rstrip(" ") for line in text[start:end].split("\n"))
        keys[(screen.cursor_row if covers else -1, lines)] += times
    return keys


def baseline_of(pattern: re.Pattern[str], screen: SearchText | None) -> list[Counter[MatchKey]]:
    """What `pattern` matched on a wait's baseline screen, in each form of its text."""
    return [match_keys(pattern, screen, text) for text in screen.forms()] if screen is not None else []


def matches_since(pattern: re.Pattern[str], screen: SearchText, baseline: list[Counter[MatchKey]]) -> bool:
    """Whether `pattern` matches something new on `screen` (in either form of its text) since
    the baseline. A match is new when its lines were not matched there (as many times): text
    that only scrolled is not new, a line that changed is, even where another match went away
    (`less`'s `/250` prompt giving way to the line 250). A match on the cursor's row is new too
    when the cursor's row has moved: the same prompt, drawn again after a command's output."""
    for index, text in enumerate(screen.forms()):
        before = baseline[min(index, len(baseline) - 1)] if baseline else Counter()
        if match_keys(pattern, screen, text) - before:
            return True
    return False


def compile_wait(request: dict[str, Any]) -> tuple[str, re.Pattern[str] | None, float]:
    """Which condition a wait request names; validated by the CLI before it gets here."""
    if request.get("text") is not None:
        return "text", re.compile(re.escape(str(request["text"]))), 0.0
    if request.get("regex") is not None:
        return "regex", re.compile(str(request["regex"]), re.MULTILINE), 0.0
    if request.get("stableMs") is not None:
        return "stable", None, float(request["stableMs"]) / 1000
    if request.get("idleMs") is not None:
        return "idle", None, float(request["idleMs"]) / 1000
    return "exit", None, 0.0


def visible_hash(live: LiveScreen) -> str:
    return screen_hash(live.screen().lines())
