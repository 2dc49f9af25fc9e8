"""Hostile round two: what a hostile program or a planted file did to a session, through the real CLI."""

from __future__ import annotations

import os
import stat
import subprocess
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


@pytest.fixture
def ended(cli: Cli) -> str:
    """A session that printed a secret and ended: its export and screenshot are what --out writes."""
    sid = cli.run("create", "--", "bash", "--norc", "-c", "echo the-secret; sleep 60").result["sessionId"]
    cli.run("wait", sid, "--text", "the-secret", "--timeout", "20s")
    return sid


@pytest.mark.parametrize("command", [("record", "export"), ("screenshot",)])
def test_out_never_writes_through_a_planted_link(cli: Cli, ended: str, tmp_path: Path, command: tuple[str, ...]) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's own file\n")
    planted = tmp_path / "x.out"
    planted.symlink_to(victim)
    refused = cli.run(*command, ended, "--out", str(planted))
    assert refused.code == 7 and refused.error["code"] == "EXPORT_FAILED", refused.stdout
    assert "symbolic link" in refused.error["message"]
    assert victim.read_text() == "the victim's own file\n" and planted.is_symlink()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_out_refuses_a_fifo_at_once(cli: Cli, ended: str, tmp_path: Path) -> None:
    fifo = tmp_path / "x.cast"
    os.mkfifo(fifo)
    refused = cli.run("record", "export", ended, "--out", str(fifo), timeout=20)
    assert refused.code == 7 and "a FIFO" in refused.error["message"], refused.stdout
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a device needs root")
def test_out_leaves_a_device_a_device(cli: Cli, ended: str, tmp_path: Path) -> None:
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    refused = cli.run("record", "export", ended, "--out", str(null))
    assert refused.code == 7 and "character device" in refused.error["message"], refused.stdout
    assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_out_to_standard_output_says_it_cannot(cli: Cli, ended: str) -> None:
    refused = cli.run("record", "export", ended, "--out", "/dev/stdout")
    assert refused.code == 7 and "regular file" in refused.error["message"], refused.stdout


def test_out_replaces_a_regular_file_with_the_callers_umask(cli: Cli, ended: str, tmp_path: Path) -> None:
    target = tmp_path / "old.cast"
    target.write_text("old\n")
    os.chmod(target, 0o600)
    cast = tmp_path / "new.cast"
    done = subprocess.run(
        ["sh", "-c", 'umask 027 && exec "$@"', "_", *cli.command, "--json", "record", "export", ended, "--out", str(target)],
        capture_output=True, text=True, env=cli.env(), timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the-secret" in target.read_text()
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert cli.run("record", "export", ended, "--out", str(cast)).result["path"] == str(cast)


def test_a_request_over_the_hosts_limit_is_the_callers_error_naming_it(cli: Cli, tmp_path: Path) -> None:
    sid = cli.run("create", "--", "bash", "--norc").result["sessionId"]
    big = tmp_path / "big.sh"
    big.write_text("echo " + "a" * (2 << 20) + "\n")
    refused = cli.run("run", sid, "--file", str(big))
    assert refused.code == 2 and refused.error["code"] == "INVALID_INPUT", refused.stdout
    assert refused.error["details"]["limit"] == 1 << 20 and "1 MiB" in refused.error["message"]
    # Nothing was sent: the session serves on.
    assert cli.run("run", sid, "echo still-here").result["output"].strip() == "still-here"
    cli.run("destroy", sid)


@pytest.mark.parametrize(
    "argv, label",
    [(["bash", "-c", "echo caf\udce9"], "argv[2]"), (["bash\udcff"], "argv[0]")],
)
def test_argv_that_is_not_utf8_is_refused_and_nothing_starts(cli: Cli, argv: list[str], label: str) -> None:
    refused = cli.run("create", "--", *argv)
    assert refused.code == 2 and refused.error["code"] == "INVALID_INPUT", refused.stdout
    assert label in refused.error["message"] and "UTF-8" in refused.error["message"]
    assert cli.run("list", "--all").result["sessions"] == []
    assert list((cli.home / "sessions").glob("*")) == []


def test_c1_controls_never_reach_a_humans_terminal(cli: Cli) -> None:
    sid = cli.run("create", "--", "bash", "--norc").result["sessionId"]
    printed = "printf 'a\\302\\23331mb\\302\\2350;title\\007c\\302\\205d\\n'"
    for doc in (cli.run("run", sid, printed).result["output"], cli.run("run", sid, printed, json_out=False).stdout):
        assert not any("\x80" <= ch <= "\x9f" for ch in doc), repr(doc)
        assert "abcd" in doc, repr(doc)
    cli.run("destroy", sid)


FLOOD = r"""
import os, select, sys, time, tty
tty.setraw(0)
os.write(1, b"\x1b]11;?\x07" * 100_000)  # about 2.4 MB of answers, never read
os.write(1, b"FLOODED\r\n")
time.sleep(3)  # the host drops what it cannot hold
held = 0
while select.select([0], [], [], 1.0)[0]:
    held += len(os.read(0, 1 << 16))
os.write(1, b"\x1b]11;?\x07")  # read again: a new question gets its answer
answer = b""
while select.select([0], [], [], 5.0)[0] and not answer.endswith((b"\x07", b"\x1b\\")):
    answer += os.read(0, 1 << 16)
answered = answer.startswith(b"\x1b]11;")
os.write(1, f"HELD {held} ANSWERED {answered}\r\n".encode())
time.sleep(300)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_answers_to_terminal_queries_are_held_only_to_the_input_bound(cli: Cli, tmp_path: Path, backend: str) -> None:
    program = tmp_path / "flood.py"
    program.write_text(FLOOD)
    env = {"AGENT_TTY_SCREEN": backend}
    sid = cli.run("create", "--", "python3", str(program), env=env).result["sessionId"]
    said = cli.run("wait", sid, "--regex", r"HELD \d+ ANSWERED \w+", "--timeout", "120s", env=env)
    assert said.result["matched"] is True, said.stdout
    line = next(line for line in cli.run("snapshot", sid, env=env).result["lines"] if line.startswith("HELD"))
    held, answered = int(line.split()[1]), line.split()[3]
    assert held <= (1 << 20) + 65536 and answered == "True", line  # the bound, and answers again after it
    events = "".join(p.read_text() for p in (cli.home / "sessions" / sid).glob("events*.jsonl"))
    assert events.count("agent-tty: terminal replies dropped") == 1
    cli.run("destroy", sid)
