"""What an agent or a person meets first: help, hints, completion, --json everywhere, keys."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent_tty.cli.main import COMMANDS
from tests.conftest import Cli

pytestmark = pytest.mark.integration


def test_json_is_honoured_by_version_help_and_no_command(cli: Cli) -> None:
    version = cli.run("--version")
    assert version.code == 0 and version.result["version"] and version.doc["command"] == "version"
    top = cli.run("--help")
    assert top.code == 0 and {c["name"] for c in top.result["commands"]} == set(COMMANDS)
    none = cli.run()
    assert none.code == 2 and none.error["code"] == "USAGE"
    wait_help = cli.run("wait", "--help")
    assert wait_help.code == 0 and "--text" in wait_help.result["usage"] and wait_help.result["examples"]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_help_has_examples(cli: Cli, name: str) -> None:
    done = cli.run(name, "--help", json_out=False)
    assert done.code == 0
    assert "Examples:" in done.stdout and f"agent-tty {name.split()[0]}" in done.stdout.split("Examples:")[1]


def test_a_mistyped_command_gets_a_suggestion(cli: Cli) -> None:
    done = cli.run("snapshto")
    assert done.code == 2 and "did you mean 'snapshot'?" in done.error["message"]


@pytest.mark.parametrize("args", [["--home"], ["--home", "list"], ["list", "--home"]])
def test_home_without_a_path_is_a_usage_error(cli: Cli, args: list[str]) -> None:
    done = cli.run(*args)
    assert done.code == 2 and "--home needs a path" in done.error["message"]
    assert not (Path.cwd() / "list").exists()


def test_create_options_after_the_program_point_to_the_separator(cli: Cli) -> None:
    done = cli.run("create", "bash", "--norc")
    assert done.code == 2 and "-- PROGRAM" in done.error["message"] and "--norc" in done.error["message"]
    assert cli.run("list").result["sessions"] == []


def test_text_sent_as_a_key_points_to_type(cli: Cli) -> None:
    done = cli.run("send-keys", "abc", "ls -la", "Enter")
    assert done.code == 2 and "agent-tty type ID 'ls -la'" in done.error["message"]


def test_modified_keys_reach_the_program_as_xterm_sends_them(cli: Cli) -> None:
    # The program reads 4 keys (25 bytes) raw and prints them in hex.
    sid = cli.create("sh", "-c", "stty raw -echo; head -c 25 | od -An -tx1 | tr -d ' \\n'; echo; echo DONE; sleep 30")["sessionId"]
    try:
        assert cli.run("send-keys", sid, "Ctrl+Left", "Shift+F5", "Alt+Up", "Ctrl+Delete").code == 0
        assert cli.run("wait", sid, "--text", "DONE", "--timeout", "10s").code == 0
        screen = "".join(cli.run("snapshot", sid).result["lines"])
        expected = b"\x1b[1;5D" + b"\x1b[15;2~" + b"\x1b[1;3A" + b"\x1b[3;5~"
        assert len(expected) == 25 and expected.hex() in screen
    finally:
        cli.run("destroy", sid)


def test_completion_offers_commands_options_and_session_ids(cli: Cli, tmp_path: Path) -> None:
    sid = cli.create("sh", "-c", "sleep 30")["sessionId"]
    try:
        words = cli.run("__complete", json_out=False).stdout.split()
        assert "snapshot" in words and "--json" in words
        after_wait = cli.run("__complete", "wait", json_out=False).stdout.split()
        assert sid in after_wait and "--text" in after_wait
        assert sid not in cli.run("__complete", "wait", sid, json_out=False).stdout.split()
        script = cli.run("--show-completion", "bash", json_out=False).stdout
        # The script, in a real bash, completes `agent-tty sn` and a session id.
        probe = (
            f"source /dev/stdin; COMP_WORDS=(agent-tty sn); COMP_CWORD=1; _agent_tty_complete; echo \"${{COMPREPLY[*]}}\";"
            f" COMP_WORDS=(agent-tty inspect {sid[:3]}); COMP_CWORD=2; _agent_tty_complete; echo \"${{COMPREPLY[*]}}\""
        )
        env = cli.env({"PATH": f"{Path(cli.command[0]).parent}:/usr/bin:/bin"})
        done = subprocess.run(["bash", "-c", probe], input=script, capture_output=True, text=True, env=env, timeout=30)
        assert done.stdout.splitlines() == ["snapshot", sid], done.stderr
        installed = cli.run("--install-completion", "fish", env={"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")})
        assert installed.code == 0
        path = Path(installed.result["path"])
        assert path == tmp_path / "cfg" / "fish" / "completions" / "agent-tty.fish" and "__complete" in path.read_text()
    finally:
        cli.run("destroy", sid)


def test_completion_of_an_unknown_shell_is_a_usage_error(cli: Cli) -> None:
    done = cli.run("--show-completion", "tcsh")
    assert done.code == 2 and "bash, zsh, fish" in done.error["message"]
    assert json.loads(done.stdout)["ok"] is False


def test_one_rule_for_durations(cli: Cli) -> None:
    import time

    sid = cli.create("sh", "-c", "sleep 30")["sessionId"]
    try:
        started = time.monotonic()
        timed_out = cli.run("wait", sid, "--text", "NEVER", "--timeout", "1")  # a bare number is seconds
        assert timed_out.code == 11 and timed_out.result["timedOut"] is True
        assert time.monotonic() - started >= 0.9
        # Options named -ms take a bare number in ms, and suffixes too.
        assert cli.run("wait", sid, "--idle-ms", "1s", "--timeout", "10s").result["matched"] is True
        assert cli.run("wait", sid, "--screen-stable-ms", "200", "--timeout", "10s").result["matched"] is True
        for huge in ("9999999999d", "99999999999999999999", "1e400"):
            refused = cli.run("wait", sid, "--text", "x", "--timeout", huge)
            assert refused.code == 2 and refused.error["code"] == "INVALID_INPUT", huge
            assert "365d" in refused.error["message"] or "a bare number is in seconds" in refused.error["message"]
    finally:
        cli.run("destroy", sid)
