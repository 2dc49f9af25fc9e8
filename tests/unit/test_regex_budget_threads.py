"""A pattern judged off the main thread (an MCP worker, a library user's thread) keeps its
budget: it runs in a child interpreter that is ended past it (terminal/regex_budget.py)."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import pytest

from agent_tty.protocol.errors import AgentTtyError, ErrorCode
from agent_tty.terminal import regex_budget


def _in_thread(function: Any, *args: Any) -> Any:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = function(*args)
        except BaseException as err:  # noqa: BLE001 - handed to the test
            box["error"] = err

    thread = threading.Thread(target=run, daemon=True)  # a red run must still end
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the evaluation never ended"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_a_runaway_pattern_in_a_thread_ends_at_the_budget() -> None:
    pattern = re.compile(r"(a+)+$")
    started = time.monotonic()
    with pytest.raises(AgentTtyError) as caught:
        _in_thread(regex_budget.search, pattern, "a" * 40 + "!")
    assert caught.value.code is ErrorCode.INVALID_INPUT and caught.value.details["budgetMs"] == 250
    assert time.monotonic() - started < regex_budget.REGEX_BUDGET_S + regex_budget.CHILD_START_S + 5


def test_a_thread_gets_the_same_answers_as_the_main_thread() -> None:
    text = "first line\nsecond LINE\n\u00e9t\u00e9 \u4e2d\u6587 \U0001f600\udce9\nlast"
    for source, flags in (
        (r"line", 0), (r"line", re.IGNORECASE), (r"^\w+$", re.MULTILINE), (r"\u4e2d.", 0), (r"zzz", 0), (r"LINE\n.", 0), (r"$", 0),
    ):  # fmt: skip
        pattern = re.compile(source, flags)
        lines = regex_budget.matched_lines(pattern, text)
        assert _in_thread(regex_budget.matched_lines, pattern, text) == lines, source
        assert _in_thread(regex_budget.search, pattern, text) == regex_budget.search(pattern, text), source


def test_matched_lines_are_the_spans_of_the_whole_lines_a_match_covers() -> None:
    text = "a x\nb\nc x y x\nd"
    spans = regex_budget.matched_lines(re.compile("x"), text)
    assert [text[a:b] for a, b in spans] == ["a x", "c x y x", "c x y x"]
    assert [text[a:b] for a, b in regex_budget.matched_lines(re.compile(r"x\nb"), text)] == ["a x\nb"]
    assert [text[a:b] for a, b in regex_budget.matched_lines(re.compile("d$"), text)] == ["d"]


def test_after_seq_keys_tell_a_prompt_drawn_again_from_the_same_one() -> None:
    from agent_tty.host.terminal import baseline_of, matches_since
    from agent_tty.terminal.screen import SearchText

    prompt = re.compile(r"\$ $", re.MULTILINE)
    before = SearchText("$", "$ ", cursor_row=0, cursor_at=0)
    assert not matches_since(prompt, before, baseline_of(prompt, before))
    after = SearchText("$ ls\nfile\n$", "$ ls\nfile\n$ ", cursor_row=2, cursor_at=10)
    assert matches_since(prompt, after, baseline_of(prompt, before))  # the prompt came back
    # A cursor that only moved right on an unchanged line is nothing new.
    plain = SearchText("Password:", None, cursor_row=0, cursor_at=0)
    moved = SearchText("Password:", "Password:  ", cursor_row=0, cursor_at=0)
    word = re.compile("Password:")
    assert not matches_since(word, moved, baseline_of(word, plain))
