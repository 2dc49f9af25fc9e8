"""What the program printed, without what the host hid and without the echo of typed input.

Two things every reader shares (ADR 0007):
- `visible`: an output event's bytes less its `hide` ranges (the echo of `run`'s completion
  postamble). The host feeds exactly these to its screen; replay, snapshot, screenshot and
  asciicast export apply the same ranges from the event log, so they all agree.
- `ProgramOutput`: the output stream with every input's echo left out: from an input event
  up to the `echoEnd` the host recorded (the newline that ended the echo of the typed line).
  `wait --output` searches it and `run` returns the command's part of it.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable

from agent_tty.terminal.regex_budget import search

OUTPUT_KEPT = 4 << 20
"""Bytes of program output kept for `wait --output` and `run`'s output; older ones are dropped."""
STARTS_KEPT = 1024
RESULT_OUTPUT_MAX = 65536
"""Bytes of output a result carries (`run`, `wait --output`): the last ones, `outputTruncated` then."""
_ESCAPES = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    rb"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, to BEL or ST
    rb"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"  # DCS, PM, APC, SOS
    rb"|\x1b[ -/]*[0-~]?"  # any other escape
)
_C1_ESCAPES = re.compile(
    "\u009b[0-?]*[ -/]*[@-~]"  # CSI as one C1 character (UTF-8 C2 9B), which some terminals obey
    "|[\u009d\u0090\u009e\u009f\u0098][^\u0007\u009c\x1b\n]*[\u0007\u009c]"  # OSC, DCS, PM, APC, SOS to BEL or ST
)
"""The 8-bit forms (an unterminated string loses only its opening control, below)."""
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LEADING_CR = re.compile(r"(^|\n)\r+")


def visible(raw: bytes, hide: tuple[int, ...] | list[int] | None, start: int = 0) -> bytes:
    """raw[start:] less the hidden ranges (`hide` holds start, end pairs of offsets in raw)."""
    if not hide:
        return raw[start:] if start else raw
    parts = []
    at = start
    for index in range(0, len(hide) - 1, 2):
        begin, end = max(hide[index], at), hide[index + 1]
        if end <= at:
            continue
        parts.append(raw[at:begin])
        at = end
    parts.append(raw[at:])
    return b"".join(parts)


def plain_text(data: bytes) -> str:
    """Output as text: escape sequences and controls removed, CR LF and lone CRs as newlines
    (a CR at a line's start, such as bash's after the echo, is dropped)."""
    return _lines_of(_without_escapes(data))


def _without_escapes(data: bytes) -> str:
    return _C1_ESCAPES.sub("", _ESCAPES.sub(b"", data).decode("utf-8", "replace"))


def _lines_of(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        text = _LEADING_CR.sub(r"\1", text.rstrip("\r"))
        text = text.replace("\r", "\n")
    return _CONTROLS.sub("", text)


def command_text(data: bytes, echoes: Iterable[str]) -> str:
    """plain_text of a multi-line `run`'s output, less the echo of each of its later lines
    (`echoes`, in order): the first line after the one before whose text, as the terminal
    draws it (CR and BS move back over what the prompt drew: zsh's PROMPT_SP, its redraws),
    ends with it; the shell's prompt (`$ `, `> `) goes with it. A line whose echo is not found
    (wrapped at the margin, completed by a TAB) stays. A blank line's echo is a bare prompt: it
    goes when it reads as the prompt the first echo found was drawn after."""
    rows = _without_escapes(data).split("\n")
    drawn = [_drawn(row).rstrip() for row in rows]
    wanted = [line.rstrip() for line in echoes]
    prompt = next(
        (text[: len(text) - len(line)].rstrip() for line in wanted if line.strip() for text in drawn if text.endswith(line)),
        "",
    )
    dropped: set[int] = set()
    at = 0
    for line in wanted:
        for index in range(at, len(rows)):
            if drawn[index].endswith(line) if line.strip() else prompt and drawn[index] == prompt:
                dropped.add(index)
                at = index + 1
                break
    return _lines_of("\n".join(row for index, row in enumerate(rows) if index not in dropped))


def _drawn(row: str) -> str:
    """A line as a terminal draws it: CR back to its start, BS back one cell, the rest over
    what was there."""
    cells: list[str] = []
    column = 0
    for char in row:
        if char == "\r":
            column = 0
        elif char == "\b":
            column = max(0, column - 1)
        elif char >= " " and char != "\x7f":
            if column < len(cells):
                cells[column] = char
            else:
                cells.append(char)
            column += 1
    return "".join(cells)


class ProgramOutput:
    """The output stream less the echo of every input, with where each input's output starts.

    An input closes the gate; the host's `echoEnd` on a later output event opens it at the
    end of that input's echo. A mark starts a region without closing the gate."""

    def __init__(self, kept: int = OUTPUT_KEPT) -> None:
        self.kept = kept
        self.buf = bytearray()
        self.base = 0
        """The stream offset of buf[0]: what came before was dropped."""
        self.open = True
        self.starts: OrderedDict[int, int] = OrderedDict()
        """seq of an input or mark -> the stream offset where its output starts."""

    @property
    def end(self) -> int:
        return self.base + len(self.buf)

    def input(self, seq: int) -> None:
        self.open = False
        self._start(seq)

    def mark(self, seq: int) -> None:
        self._start(seq)

    def _start(self, seq: int) -> None:
        self.starts[seq] = self.end
        while len(self.starts) > STARTS_KEPT:
            self.starts.popitem(last=False)

    def output(self, raw: bytes, hide: tuple[int, ...] | list[int] | None, echo_end: int | None) -> None:
        if not self.open:
            if echo_end is None:
                return
            self.open = True
            shown = visible(raw, hide, echo_end)
        else:
            shown = visible(raw, hide)
        self.buf += shown
        if len(self.buf) > 2 * self.kept:
            drop = len(self.buf) - self.kept
            del self.buf[:drop]
            self.base += drop

    def start_for(self, after: int | str | None) -> int:
        """Where the output after event `after` starts: the latest input or mark at or before
        it (`last` or None: the latest of all). When `after` is older than every one kept, the
        oldest kept: later than asked, so nothing printed before `after` can match."""
        if not self.starts:
            return self.base
        if after is None or after == "last":
            return next(reversed(self.starts.values()))
        chosen = None
        for seq, offset in self.starts.items():
            if isinstance(after, int) and seq <= after:
                chosen = offset
        return chosen if chosen is not None else next(iter(self.starts.values()))

    def since(self, start: int, end: int | None = None) -> bytes:
        begin = max(start, self.base) - self.base
        stop = len(self.buf) if end is None else max(begin, end - self.base)
        return bytes(self.buf[begin:stop])

    def find(self, needle: bytes, start: int) -> int | None:
        """The stream offset of the last `needle` at or after `start`."""
        index = self.buf.rfind(needle, max(start, self.base) - self.base)
        return None if index < 0 else self.base + index


class OutputSearch:
    """One `wait --output`: its pattern over the output from `start`, converted to text
    incrementally (complete lines once; the unfinished last line at every look)."""

    WINDOW = 65536
    """Characters of already-searched text kept for a regex that spans lines."""

    def __init__(self, pattern: re.Pattern[str], start: int, literal: str | None) -> None:
        self.pattern = pattern
        self.upto = start
        self.text = ""
        self.keep = len(literal) - 1 if literal is not None else self.WINDOW

    def matched(self, output: ProgramOutput) -> bool:
        data = output.since(self.upto)
        cut = data.rfind(b"\n") + 1
        if cut:
            self.text += plain_text(data[:cut])
            self.upto = max(self.upto, output.base) + cut
        text = self.text + plain_text(data[cut:])
        if search(self.pattern, text):  # INVALID_INPUT past the budget (regex_budget)
            return True
        self.text = self.text[-self.keep :] if self.keep > 0 else ""
        return False


def output_fields(printed: bytes) -> dict[str, object]:
    """A result's `output` and `outputTruncated`: the text of the last RESULT_OUTPUT_MAX bytes."""
    return result_output(plain_text(printed[-RESULT_OUTPUT_MAX:]), len(printed) > RESULT_OUTPUT_MAX)


def result_output(text: str, truncated: bool) -> dict[str, object]:
    """`output` and `outputTruncated`; a cut-off text starts at its first whole line (the cut
    fell anywhere, inside a line or a character), unless it is one line."""
    if truncated and "\n" in text[:-1]:
        text = text[text.index("\n") + 1 :]
    return {"output": text, "outputTruncated": truncated}


def output_after(events: Iterable, after: int | str | None) -> bytes:  # type: ignore[type-arg]
    """An ended session's output after event `after`, from its event log (see ProgramOutput)."""
    from agent_tty.terminal.replay import output_bytes

    output = ProgramOutput()
    for event in events:
        if event.type == "output":
            output.output(output_bytes(event), getattr(event, "hide", None), getattr(event, "echo_end", None))
        elif event.type == "input":
            output.input(event.seq)
        elif event.type == "marker":
            output.mark(event.seq)
    return output.since(output.start_for(after))
