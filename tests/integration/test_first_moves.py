"""Small things a new agent meets first (issue 29's hint and small ones): a hint it can follow
safely, the key names people type, the import it tries, completion of names, a readable gc."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import NOT_PINNED, Cli

pytestmark = [pytest.mark.integration, NOT_PINNED]


def test_a_shared_folder_as_home_is_never_answered_with_a_chmod(cli: Cli, tmp_path: Path) -> None:
    done = cli.run("--home", "/tmp", "list")
    assert done.code == 8 and done.error["code"] == "UNSAFE_HOME"
    assert "chmod" not in done.error["message"] and "--home" in done.error["message"], done.error
    own = tmp_path / "open"
    own.mkdir()
    os.chmod(own, 0o777)  # a folder of the caller's own: changing it is the caller's to do
    assert f"chmod go-w {own}" in cli.run("--home", str(own), "list").error["message"]
    os.chmod(own, 0o1777)  # sticky and open to all: a shared folder by design
    assert "chmod" not in cli.run("--home", str(own), "list").error["message"]


def test_pgup_and_pgdn_are_keys(cli: Cli) -> None:
    sid = cli.create("sh", "-c", "stty raw -echo; head -c 8 | od -An -tx1 | tr -d ' \\n'; echo; echo DONE; sleep 30")["sessionId"]
    assert cli.run("send-keys", sid, "PgUp", "PgDn").code == 0
    assert cli.run("wait", sid, "--text", "DONE", "--timeout", "10s").code == 0
    assert (b"\x1b[5~" + b"\x1b[6~").hex() in "".join(cli.run("snapshot", sid).result["lines"])


def test_the_api_is_importable_from_the_package_without_weighing_on_start_up() -> None:
    program = (
        "import sys, agent_tty\n"
        "assert 'agent_tty.api' not in sys.modules\n"
        "from agent_tty import Client, Session, AgentTtyError, ErrorCode\n"
        "import agent_tty.api as api\n"
        "assert Client is api.Client and 'Client' in dir(agent_tty)\n"
        "try:\n"
        "    agent_tty.NoSuchName\n"
        "except AttributeError:\n"
        "    print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr


def test_completion_offers_session_names(cli: Cli) -> None:
    sid = cli.create("sleep", "60", options=("--name", "build-log"))["sessionId"]
    words = cli.run("__complete", "wait", json_out=False).stdout.split()
    assert sid in words and "build-log" in words


def test_gc_counts_many_live_sessions_in_one_line(cli: Cli) -> None:
    made = [cli.create("sleep", "60")["sessionId"] for _ in range(4)]
    text = cli.run("gc", json_out=False).stdout
    assert "kept 4 sessions: session host is still alive (running)" in text, text
    assert not any(sid in text for sid in made)
    assert sorted(s["sessionId"] for s in cli.run("gc").result["skippedSessions"]) == sorted(made)


def test_the_prompt_example_of_wait_help_matches_a_prompt(tty: Cli) -> None:
    sid = tty.create("bash", "--norc", "--noprofile", options=("--env", "PS1=$ "))["sessionId"]
    done = tty.run("wait", sid, "--regex", r"\$ $", "--timeout", "10s")
    assert done.code == 0 and done.result["matched"] is True, done.stdout
    assert tty.run("wait", sid, "--regex", r"^\$$", "--timeout", "10s").code == 0
    # Blanks are kept on the cursor row only, up to the cursor; the stripped form matches too.
    tty.run("type", sid, "echo 'x   '\n")
    assert tty.run("wait", sid, "--regex", "^x$", "--timeout", "10s").code == 0
    assert tty.run("wait", sid, "--regex", "^x   $", "--timeout", "1s").code == 11


def test_after_seq_sees_a_line_that_changed_where_another_match_went_away(tty: Cli) -> None:
    sid = tty.create("sh", "-c", "seq 1000 | less", options=("--env", "LESSHISTFILE=-"))["sessionId"]
    assert tty.run("wait", sid, "--text", "23", "--timeout", "10s").code == 0
    tty.run("type", sid, "/250")
    assert tty.run("wait", sid, "--text", "/250", "--timeout", "10s").code == 0
    enter = tty.run("send-keys", sid, "Enter").result["seq"]
    done = tty.run("wait", sid, "--text", "250", "--after-seq", str(enter), "--timeout", "10s")
    assert done.code == 0 and done.result["matched"] is True, done.stdout
    lines = tty.run("snapshot", sid).result["lines"]
    assert lines[0] == "250" and "/250" not in lines


def test_after_seq_does_not_take_text_that_only_scrolled_for_new(tty: Cli) -> None:
    sid = tty.create("bash", "--norc", "--noprofile")["sessionId"]
    assert tty.run("run", sid, "echo DONE", "--timeout", "10s").result["completed"] is True
    seq = tty.run("type", sid, "seq 30\n").result["seq"]
    assert tty.run("wait", sid, "--text", "29", "--timeout", "10s").code == 0
    assert tty.run("wait", sid, "--text", "DONE", "--after-seq", str(seq), "--timeout", "1s").code == 11
    assert tty.run("run", sid, "echo DONE", "--timeout", "10s").code == 0
    assert tty.run("wait", sid, "--text", "DONE", "--after-seq", str(seq), "--timeout", "10s").code == 0


def test_a_failed_command_fails_run_and_its_text_is_the_output_alone(cli: Cli) -> None:
    sid = cli.create("bash", "--norc", "--noprofile")["sessionId"]
    failed = cli.run("run", sid, "echo built-half; (exit 3)", "--timeout", "10s")
    assert failed.code == 12 and failed.result["exitStatus"] == 3 and failed.doc["ok"] is True, failed.stdout
    text = cli.run("run", sid, "echo built-half; (exit 3)", "--timeout", "10s", json_out=False)
    assert text.code == 12 and text.stdout == "built-half\n", text
    assert "exit status 3" in text.stderr
    chained = subprocess.run(
        ["sh", "-c", f'"$@" && echo DEPLOYED', "sh", *cli.command, "run", sid, "false"],
        capture_output=True, text=True, env=cli.env(), timeout=30,
    )
    assert chained.returncode == 12 and "DEPLOYED" not in chained.stdout
    ok = cli.run("run", sid, "echo fine", "--timeout", "10s", json_out=False)
    assert ok.code == 0 and ok.stdout == "fine\n" and ok.stderr == ""


def test_run_refuses_at_once_what_it_could_never_complete(cli: Cli) -> None:
    python = cli.create("python3", "-q")["sessionId"]
    assert cli.run("wait", python, "--text", ">>>", "--timeout", "10s").code == 0
    refused = cli.run("run", python, "print(6*7)", "--timeout", "20s")
    assert refused.code == 2 and refused.error["details"]["foreground"].startswith("python"), refused.stdout
    assert "type" in refused.error["message"] and "wait" in refused.error["message"]
    assert "printf" not in cli.run("snapshot", python).result["text"]  # nothing was typed
    shell = cli.create("bash", "--norc", "--noprofile")["sessionId"]
    commented = cli.run("run", shell, "echo kept # a note", "--timeout", "20s")
    assert commented.code == 2 and "comment" in commented.error["message"], commented.stdout
    assert "a note" not in cli.run("snapshot", shell).result["text"]
    # A '#' inside a word or quotes is no comment; a shell's job in the foreground is not judged.
    assert cli.run("run", shell, "echo 'a # b' c#d", "--timeout", "20s").result["output"] == "a # b c#d\n"
    assert cli.run("run", shell, "python3 -c 'import time; time.sleep(0.3)'; echo after", "--timeout", "20s").result["output"] == "after\n"


def test_a_run_that_times_out_returns_what_the_command_printed(cli: Cli) -> None:
    sid = cli.create("bash", "--norc", "--noprofile")["sessionId"]
    timed = cli.run("run", sid, "echo first-part; sleep 30", "--timeout", "5s")
    assert timed.code == 11 and timed.result["timedOut"] is True
    assert timed.result["output"] == "first-part\n", timed.stdout
    text = cli.run("run", sid, "echo more", "--timeout", "1s", json_out=False)  # typed ahead of the sleep
    assert text.code == 11 and text.stdout == "" and "timed out" in text.stderr
