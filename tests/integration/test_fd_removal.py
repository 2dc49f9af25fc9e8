"""gc removes a session folder through a checked fd of sessions/: a `sessions` swapped for a link
between gc's checks and its removal never redirects the removal outside the Home (ADR 0008)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import Cli, wait_until

pytestmark = pytest.mark.integration


def test_gc_removes_through_the_fd_it_checked_not_a_swapped_link(cli: Cli, tmp_path: Path) -> None:
    sid = cli.create("true")["sessionId"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exited")
    elsewhere = tmp_path / "elsewhere"
    precious = elsewhere / sid / "precious.txt"
    precious.parent.mkdir(parents=True)
    precious.write_text("keep me\n")
    sessions = cli.home / "sessions"
    log = tmp_path / "replay.log"
    # gc holds its removal of the session folder; meanwhile `sessions` becomes a link to a
    # folder that holds a folder of the same name.
    collecting = cli.start("gc", env=cli.replay_env(f"gc:rmtree:/sessions/{sid}:1:2000", log))
    wait_until(lambda: log.exists() and "hold" in log.read_text(), what="gc to hold its removal")
    os.rename(sessions, cli.home / "sessions.real")
    os.symlink(elsewhere, sessions)
    try:
        out, err = collecting.communicate(timeout=30)
        assert collecting.returncode == 0, (out, err)
        assert precious.read_text() == "keep me\n", "gc removed a folder outside the Home through the link"
        assert not (cli.home / "sessions.real" / sid).exists(), "the session folder gc checked is the one it removes"
    finally:
        os.unlink(sessions)
        os.rename(cli.home / "sessions.real", sessions)
