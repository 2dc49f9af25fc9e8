from __future__ import annotations

import signal

import pytest

from agent_tty.protocol.errors import AgentTtyError, ExitCode
from agent_tty.protocol.status import STATUS_POLICY, Status, policy
from agent_tty.protocol.values import check_cells, check_size, parse_duration, parse_duration_ms, parse_signal
from agent_tty.storage.home import new_session_id, validate_session_id


@pytest.mark.parametrize(
    "text, seconds",
    [("500ms", 0.5), ("2s", 2), ("5m", 300), ("1h", 3600), ("3d", 259200), ("1.5s", 1.5), ("0s", 0), ("7", 7)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "-1s", "soon", "5 parsecs", "1x", "ms"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(AgentTtyError) as info:
        parse_duration(text)
    assert info.value.exit_code == ExitCode.INVALID_INPUT
    assert repr(text) in info.value.message


@pytest.mark.parametrize("text", ["INT", "SIGINT", "int", "2"])
def test_signals(text: str) -> None:
    assert parse_signal(text) == signal.SIGINT


@pytest.mark.parametrize("text", ["SIGFOO", "0", "999", "", "-9"])
def test_bad_signals(text: str) -> None:
    with pytest.raises(AgentTtyError):
        parse_signal(text)


def test_sizes() -> None:
    check_size(1, 1)
    with pytest.raises(AgentTtyError):
        check_size(0, 24)
    with pytest.raises(AgentTtyError):
        check_size(80, 10001)


def test_a_structured_read_is_bounded_by_the_callers_cells() -> None:
    check_cells(1000, 250, None)  # no bound: the CLI's and the API's default
    check_cells(200, 100, 20_000)  # at the bound
    with pytest.raises(AgentTtyError) as info:
        check_cells(201, 100, 20_000)
    assert info.value.exit_code == ExitCode.INVALID_INPUT and "20,000" in info.value.message
    assert info.value.details == {"limit": 20_000, "cells": 20_100, "cols": 201, "rows": 100}
    for bad in (0, -1, True, 2.5, "20000"):
        with pytest.raises(AgentTtyError) as info:
            check_cells(80, 24, bad)  # type: ignore[arg-type]
        assert info.value.exit_code == ExitCode.INVALID_INPUT and "max_cells" in info.value.message


def test_session_ids() -> None:
    for _ in range(50):
        generated = new_session_id()
        assert validate_session_id(generated) == generated and len(generated) == 12
    for bad in ["../x", "/abs", "", ".", "a/b", "A", "a" * 65, "-x", "a\0b", "a b"]:
        with pytest.raises(AgentTtyError) as info:
            validate_session_id(bad)
        assert info.value.exit_code == ExitCode.INVALID_INPUT


def test_status_policy_table() -> None:
    assert set(STATUS_POLICY) == set(Status)
    for status, rules in STATUS_POLICY.items():
        assert rules.active != rules.terminal, status
        assert not (rules.commandable and not rules.active), status
        assert rules.collectable == rules.terminal, status
    assert policy("running").commandable and not policy("destroying").commandable
    assert policy("destroyed").destroyed and not policy("failed").destroyed


@pytest.mark.parametrize(
    ("text", "bare_unit", "ms"),
    [("30", "s", 30_000), ("30", "ms", 30), ("1s", "ms", 1000), ("250ms", "s", 250), ("1.5", "s", 1500), ("0.0001s", "s", 1), ("0", "s", 0)],
)
def test_a_bare_number_is_in_the_options_unit(text: str, bare_unit: str, ms: int) -> None:
    assert parse_duration_ms(text, "--x", bare_unit) == ms


@pytest.mark.parametrize("text", ["9999999999d", "99999999999999999999", "366d", "1e400", "inf", "nan", "-1", "1y"])
def test_huge_or_odd_durations_are_exit_2_not_an_overflow(text: str) -> None:
    with pytest.raises(AgentTtyError) as raised:
        parse_duration_ms(text, "--timeout")
    assert raised.value.exit_code == ExitCode.INVALID_INPUT
    assert "--timeout" in raised.value.message
