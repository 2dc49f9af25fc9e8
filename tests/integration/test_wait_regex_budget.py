"""A backtracking `wait --regex` ends with a clear error and stalls no other command (issue 11, item 8)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cli

pytestmark = pytest.mark.integration

EXPLOSIVE = "(a+)+$"
"""Against 27 `a` and a `!`, Python's re backtracks for about 30 s."""


def test_a_backtracking_regex_ends_its_wait_and_leaves_the_host_answering(cli: Cli) -> None:
    sid = cli.create("sh", "-c", "printf '%s!\\n' aaaaaaaaaaaaaaaaaaaaaaaaaaa; sleep 60")["sessionId"]
    assert cli.run("wait", sid, "--text", "!", "--timeout", "10s").code == 0
    for extra in ((), ("--output",)):
        waiting = cli.start("wait", sid, "--regex", EXPLOSIVE, "--timeout", "1s", *extra)
        try:
            # Meanwhile the same host answers: a snapshot's RPC gives up after 5 s.
            snap = cli.run("snapshot", sid, timeout=20)
            assert snap.code == 0, (snap.stdout, snap.stderr)
            assert "aaaaaaaaaaaaaaaaaaaaaaaaaaa!" in snap.result["text"]
            stdout, _stderr = waiting.communicate(timeout=20)
        finally:
            if waiting.poll() is None:
                waiting.kill()
                waiting.communicate()
        assert waiting.returncode == 2, (extra, stdout)
        error = json.loads(stdout)["error"]
        assert error["code"] == "INVALID_INPUT", error
        assert EXPLOSIVE in error["message"] and "250 ms" in error["message"]
        assert error["details"]["budgetMs"] == 250
    # An ended session's wait is judged by the CLI from the log, under the same budget.
    assert cli.run("destroy", sid).code == 0
    for extra in ((), ("--output",)):
        offline = cli.run("wait", sid, "--regex", EXPLOSIVE, "--timeout", "1s", *extra, timeout=20)
        assert offline.code == 2, (extra, offline.stdout)
        assert offline.error["code"] == "INVALID_INPUT" and EXPLOSIVE in offline.error["message"]
