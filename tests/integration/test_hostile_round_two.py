"""Hostile round two: what a hostile program or a planted file did to a session, through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import BACKENDS, NOT_PINNED, Cli

pytestmark = [pytest.mark.integration, NOT_PINNED]

CRASHED_PYTE = ["\\e[1;2A", "\\e[?4m", "\\e[?6n", "\\e[6J"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sequence_pyte_cannot_take_leaves_the_session_running(cli: Cli, backend: str) -> None:
    env = {"AGENT_TTY_SCREEN": backend}
    sid = cli.run("create", "--", "bash", "--norc", env=env).result["sessionId"]
    script = "printf '" + "".join(CRASHED_PYTE) + "'; echo after-the-sequences"
    done = cli.run("run", sid, script, "--timeout", "20s", env=env).result
    assert done["completed"] is True and done["exitStatus"] == 0, done
    assert cli.run("inspect", sid).result["status"] == "running"
    assert "after-the-sequences" in cli.run("snapshot", sid, "--format", "text", env=env).stdout
    # The log the live screen survived replays too, once the session ended.
    cli.run("destroy", sid)
    assert "after-the-sequences" in cli.run("snapshot", sid, env=env).stdout
