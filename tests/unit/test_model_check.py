"""model/check and model/story.py read TLC's output right and write the configs runs.json asks for (no Java)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load(name: str, path: Path) -> ModuleType:
    loader = importlib.machinery.SourceFileLoader(name, str(path))  # model/check has no .py suffix
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


check = load("model_check_under_test", ROOT / "model" / "check")
story = load("model_story_under_test", ROOT / "model" / "story.py")

TLC_VIOLATION = """\
Starting... (2026-11-29 21:04:54)
Computing initial states...
Error: Invariant R1 is violated.
Error: The behavior up to this point is:
State 1: <Initial predicate>
/\\ x = 0
/\\ phase = "idle"
/\\ log = <<>>

State 2: <HostSpawns line 120, col 3 to line 130, col 40 of module SessionLifecycle>
/\\ x = 0
/\\ phase = "run"
/\\ log = <<>>

State 3: <Poll line 10, col 9 to line 12, col 26 of module SessionLifecycle>
/\\ x = 1
/\\ phase = "run"
/\\ log = << [step |-> 0, note |-> "a"],
   [step |-> 1, note |-> "b"] >>

1,234 states generated, 1,204 distinct states found, 1 states left on queue.
The depth of the complete state graph search is 3.
Finished in 00s at (2026-11-29 21:04:54)
"""

TLC_PASS = """\
Model checking completed. No error has been found.
8 states generated, 8 distinct states found, 0 states left on queue.
"""


def test_trace_is_cut_from_the_behavior_line_to_the_last_state_block() -> None:
    trace = story.extract_trace(TLC_VIOLATION)
    assert trace.startswith("Error: The behavior up to this point is:\n")
    assert trace.endswith('   [step |-> 1, note |-> "b"] >>\n')
    assert "states generated" not in trace


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("<Initial predicate>", "Initial"),
        ("<HostSpawns line 120, col 3 to line 130, col 40 of module SessionLifecycle>", "HostSpawns"),
        ("<Action line 5, col 1 to line 9, col 2 of module SessionLifecycle> extra text", "Action"),
        ("<Wrap>", "Wrap"),
        ("Stuttering", "Stuttering"),
    ],
)
def test_action_name_is_the_first_word_in_angle_brackets(header: str, name: str) -> None:
    assert story.action_name(header) == name


def test_action_names_follow_the_states_including_a_loop_back() -> None:
    trace = story.extract_trace(TLC_VIOLATION) + "\nBack to state 2: <Wrap line 6, col 9 to line 6, col 23 of module M>\n"
    assert story.action_names(trace) == ["Initial", "HostSpawns", "Poll", "Wrap"]


def test_story_numbers_the_steps_and_shows_what_changed() -> None:
    labels = {"HostSpawns": "the host spawns the child", "Initial": "nothing has started"}
    text = story.render(story.extract_trace(TLC_VIOLATION), labels, "R1")
    assert text == (
        "Start: nothing has started\n"
        "   x = 0\n"
        '   phase = "idle"\n'
        "   log = <<>>\n"
        "1. the host spawns the child\n"
        '   phase: "idle" -> "run"\n'
        "2. Poll\n"
        "   x: 0 -> 1\n"
        '   log: <<>> -> << [step |-> 0, note |-> "a"], [step |-> 1, note |-> "b"] >>\n'
        "After step 2, invariant R1 is violated.\n"
    )


def test_story_reads_variables_without_conjunction_marks_and_cuts_long_values() -> None:
    long_old, long_new = "<<" + "1, " * 100 + "1>>", "<<" + "1, " * 100 + "2>>"
    trace = f"State 1: <Initial predicate>\nv = {long_old}\n\nState 2: <Step line 1>\nv = {long_new}\n"
    line = story.render(trace, {}).splitlines()[-1]
    assert line.startswith("   v: ...") and line.endswith("2>>")
    assert len(line) < 2 * story.WIDTH


def test_cfg_has_constants_init_next_and_invariants() -> None:
    text = check.cfg_text({"GuardA": False, "MaxPolls": 2, "Pids": "{1, 2}"}, ["TypeOK", "R1"])
    assert text == (
        "CONSTANTS\n  GuardA = FALSE\n  MaxPolls = 2\n  Pids = {1, 2}\n"
        "INIT Init\nNEXT Next\nINVARIANTS\n  TypeOK\n  R1\n"
    )


def test_constants_are_defaults_then_guards_then_the_run_then_quick() -> None:
    config = {"defaults": {"MaxPolls": 2, "Flag": True}, "guards": ["GuardA", "GuardB", "GuardC"]}
    run = {"constants": {"GuardB": False, "Flag": False}, "quick": {"MaxPolls": 1}}
    guards = {"GuardA": True, "GuardB": True}  # GuardC missing from the facts: FALSE
    assert check.run_constants(config, run, guards, quick=False) == {
        "MaxPolls": 2, "Flag": False, "GuardA": True, "GuardB": False, "GuardC": False,
    }
    assert check.run_constants(config, run, guards, quick=True)["MaxPolls"] == 1


def test_runs_are_selected_by_quick_only_and_shard() -> None:
    config = {
        "spec": "S",
        "runs": [
            {"name": "a", "expect": "pass", "invariants": ["I"], "quick": {}},
            {"name": "b", "expect": "pass", "invariants": ["I"]},
            {"name": "c", "expect": "violated", "invariants": ["I"], "quick": {}},
        ],
    }
    check.validate_config(config, Path("runs.json"))

    def names(quick: bool, only: list[str] | None, shard: tuple[int, int]) -> list[str]:
        return [run.name for run in check.select_runs(config, {}, quick, only, shard)]

    assert names(True, None, (1, 1)) == ["a", "c"]
    assert names(False, ["b", "c"], (1, 1)) == ["b", "c"]
    assert names(False, None, (2, 2)) == ["b"]
    with pytest.raises(check.ToolError):
        check.select_runs(config, {}, False, ["nope"], (1, 1))


def test_values_other_than_booleans_ints_and_strings_are_refused() -> None:
    assert check.tla_value(True) == "TRUE" and check.tla_value(3) == "3" and check.tla_value("v1") == "v1"
    with pytest.raises(check.ToolError):
        check.tla_value(1.5)


def test_results_are_classified_and_states_counted() -> None:
    assert check.classify(TLC_PASS) == "pass"
    assert check.classify(TLC_VIOLATION) == "violated:R1"
    assert check.classify("Error: TLC threw an unexpected exception.") == "error"
    assert check.distinct_states(TLC_VIOLATION) == 1204
    assert check.distinct_states("Semantic errors:") is None


@pytest.mark.parametrize(
    ("expect", "result", "ok"),
    [
        ("pass", "pass", True),
        ("pass", "violated:R1", False),
        ("violated", "violated:R1", True),
        ("violated", "violated:Other", False),
        ("violated", "pass", False),
        ("pass", "error", False),
        ("violated", "error", False),
    ],
)
def test_a_run_is_ok_only_when_it_ends_as_expected(expect: str, result: str, ok: bool) -> None:
    run = check.Run("r", expect, ["TypeOK", "R1"], {})
    assert check.is_expected(run, result) is ok


def test_run_lines_say_what_was_expected_and_exit_codes_rank_unexpected_over_stale(tmp_path: Path) -> None:
    good = check.Outcome(check.Run("current", "pass", ["R1"], {}), tmp_path, "pass", 1234567, 312.4)
    bad = check.Outcome(check.Run("mutant-G", "violated", ["R1"], {}), tmp_path, "error", None, 1.0)
    assert check.outcome_line(good, 8).startswith("ok          current   pass ")
    assert "1,234,567 states" in check.outcome_line(good, 8)
    assert "UNEXPECTED  mutant-G  tool error (expected violated)" in check.outcome_line(bad, 8)
    assert check.exit_code([good], stale=False) == 0
    assert check.exit_code([good], stale=True) == 3
    assert check.exit_code([good, bad], stale=True) == 1


def test_shard_and_jobs_settings_are_checked() -> None:
    assert check.parse_shard("2/3") == (2, 3) and check.parse_shard(None) == (1, 1)
    assert check.parse_jobs("4") == 4
    for bad_shard in ("0/2", "3/2", "x"):
        with pytest.raises(check.ToolError):
            check.parse_shard(bad_shard)
    with pytest.raises(check.ToolError):
        check.parse_jobs("0")


def test_list_names_every_run_with_what_it_must_give_and_whether_quick_runs_it() -> None:
    config = {
        "spec": "S",
        "runs": [
            {"name": "current", "expect": "pass", "invariants": ["R1"], "quick": {}},
            {"name": "mutant-G", "expect": "violated", "invariants": ["R2"], "constants": {"G": False}},
        ],
    }
    check.validate_config(config, Path("runs.json"))
    assert check.list_lines(config) == ["current   quick  pass", "mutant-G  full   violated:R2  G=FALSE"]
