"""The agent loop tells the truth: `run`'s completion marker is invisible to every reader, and
`wait --output` matches only what the program printed after the typed line (ADR 0007)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
import select
import shutil
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest

from tests.conftest import HAS_GHOSTTY, Cli, wait_until

pytestmark = pytest.mark.integration
POSTAMBLE_ECHO = ("7770", "\\033]")
"""What the echo of `; printf '\\033]7770;%s;%s\\007' TOKEN $?` would put on a line."""
ECHO_IN_STREAM = ("printf '\\033", "7770;%s;%s")
"""The same echo in a recording's text, which also holds the marker itself (ESC ] 7770 ; ...,
which no terminal draws)."""
PROMPT_LINE = r"^\$$"
"""An empty `$ ` prompt (snapshot lines are right-trimmed): the shell is ready again."""
# With PS1='$ ', `echo ` and n x's, the postamble's character k lands in column 80 when
# n = 73 - k: the margin falls before it (k=0), inside it, on its last character (k=45) and
# just after it (k=46); 3 fits on one row and 130 takes three.
WRAPS = (3, 73, 72, 63, 53, 43, 28, 27, 130)


def shell(cli: Cli, tmp_path: Path, *argv: str, name: str = "s") -> str:
    """A shell with a `$ ` prompt and a history file of its own."""
    history = tmp_path / f"{name}.history"
    options = ("--env", "PS1=$ ", "--env", f"HISTFILE={history}")
    return cli.create(*argv, options=options)["sessionId"]


def bash(cli: Cli, tmp_path: Path, name: str = "bash") -> str:
    return shell(cli, tmp_path, "bash", "--norc", "--noprofile", name=name)


def everything(cli: Cli, sid: str) -> list[str]:
    snap = cli.run("snapshot", sid, "--scrollback").result
    return [*snap["scrollback"], *snap["lines"]]


def assert_no_postamble(lines: list[str], where: str) -> None:
    shown = [line for line in lines if any(text in line for text in POSTAMBLE_ECHO)]
    assert not shown, f"{where} shows the completion postamble: {shown}"


def typed(cli: Cli, sid: str, command: str) -> None:
    """What `run` would do, without a marker: type the line, Enter, wait for the next prompt."""
    cli.run("type", sid, command)
    enter = cli.run("send-keys", sid, "Enter").result["seq"]
    done = cli.run("wait", sid, "--regex", PROMPT_LINE, "--after-seq", str(enter), "--timeout", "20s")
    assert done.code == 0, done.stdout


def settle(cli: Cli, sid: str) -> None:
    assert cli.run("wait", sid, "--screen-stable-ms", "200", "--timeout", "20s").code == 0


def cast_text(path: str) -> str:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines()[1:]]
    return "".join(row[2] for row in rows if row[1] == "o")


def test_the_postamble_echo_is_hidden_from_every_reader(tty: Cli, tmp_path: Path) -> None:
    ran, twin = bash(tty, tmp_path, "ran"), bash(tty, tmp_path, "twin")
    commands = [f"echo {'x' * n}" for n in WRAPS] + ["printf 'one\\ntwo\\n' | head -1"]
    for command in commands:
        result = tty.run("run", ran, command, "--timeout", "20s").result
        assert result["completed"] is True and result["exitStatus"] == 0, (command, result)
        typed(tty, twin, command)
    settle(tty, ran)
    settle(tty, twin)

    # The screen (and its scrollback) is exactly the one of the same lines typed by hand.
    live = everything(tty, ran)
    assert_no_postamble(live, "the live screen")
    assert live == everything(tty, twin)
    assert "$ printf 'one\\ntwo\\n' | head -1" in live and "one" in live
    structured = tty.run("snapshot", ran, "--format", "structured").result
    assert structured["screenHash"] == tty.run("snapshot", twin, "--format", "structured").result["screenHash"]
    assert structured["cells"] == tty.run("snapshot", twin, "--format", "structured").result["cells"]
    shots = [tty.run("screenshot", sid).result for sid in (ran, twin)]
    assert shots[0]["sha256"] == shots[1]["sha256"], "the screenshot draws what the snapshot holds"

    # The recording leaves the echo out too; the event log keeps every byte the shell wrote.
    cast = tty.run("record", "export", ran, "--out", str(tmp_path / "ran.cast")).result
    text = cast_text(cast["path"])
    assert "x" * 130 in text and not any(echo in text for echo in ECHO_IN_STREAM)
    asciinema = shutil.which("asciinema") or str(Path(tty.command[0]).with_name("asciinema"))
    if Path(asciinema).exists():
        played = subprocess.run([asciinema, "cat", cast["path"]], capture_output=True, text=True, timeout=60)
        assert played.returncode == 0 and "printf '\\033]7770" not in played.stdout
    log = (tty.folder(ran) / "events.jsonl").read_text()
    assert "printf '\\\\033]7770;%s;%s\\\\007'" in log, "the raw echo stays in the event log"

    # An ended session replays to the same screen.
    structured = tty.run("snapshot", ran, "--format", "structured", "--scrollback").result
    assert tty.run("destroy", ran).result["destroyed"] is True
    replayed = tty.run("snapshot", ran, "--format", "structured", "--scrollback").result
    assert replayed["source"] == "replay"
    for key in ("lines", "scrollback", "cells", "screenHash"):  # bash moves the cursor as it hangs up
        assert replayed[key] == structured[key], key


def test_wait_output_matches_only_what_the_program_printed(tty: Cli, tmp_path: Path) -> None:
    sid = bash(tty, tmp_path)
    started = time.monotonic()
    seq = tty.run("run", sid, "sleep 2; echo SERVER-READY", "--no-wait").result["seq"]
    ready = tty.run("wait", sid, "--text", "SERVER-READY", "--output", "--after-seq", str(seq), "--timeout", "20s")
    assert ready.code == 0 and ready.result["matched"] is True, ready.stdout
    assert time.monotonic() - started >= 1.9, "matched the echo of the typed line, not the program's output"
    # The screen wait still sees the echo; the output wait does not.
    quiet = tty.run("run", sid, "echo ONLY-IN-THE-$((0))-ECHO >/dev/null").result
    assert quiet["output"] == ""
    assert tty.run("wait", sid, "--text", "ECHO >/dev/null", "--after-seq", str(quiet["seq"]), "--timeout", "5s").code == 0
    missed = tty.run("wait", sid, "--text", "ECHO >/dev/null", "--output", "--after-seq", str(quiet["seq"]), "--timeout", "700ms")
    assert missed.code == 11 and missed.result["timedOut"] is True
    # --regex, and the default baseline: the session's last input.
    tty.run("run", sid, "sleep 1; echo \"code=$((6*7))\"", "--no-wait")
    assert tty.run("wait", sid, "--regex", r"^code=\d+$", "--output", "--timeout", "20s").code == 0
    # run returns what the command printed, between its line's echo and its marker.
    printed = tty.run("run", sid, "printf 'alpha\\nbeta\\n'").result
    assert printed["output"] == "alpha\nbeta\n" and printed["outputTruncated"] is False
    script = tmp_path / "two.sh"
    script.write_text("echo first-line\necho second-line\n")
    from_file = tty.run("run", sid, "--file", str(script)).result
    assert from_file["output"] == "first-line\nsecond-line\n", "the output of every line of the file"
    assert_no_postamble(everything(tty, sid), "the screen")

    # An ended session: judged once from its event log.
    tty.run("destroy", sid)
    assert tty.run("wait", sid, "--text", "beta", "--output", "--after-seq", str(printed["seq"])).result["matched"] is True
    ended = tty.run("wait", sid, "--text", "ECHO >/dev/null", "--output", "--after-seq", str(quiet["seq"]))
    assert ended.code == 4
    assert tty.run("wait", sid, "--text", "ECHO >/dev/null", "--after-seq", str(quiet["seq"])).code == 0


def test_wait_output_returns_what_the_program_printed(cli: Cli, tmp_path: Path) -> None:
    """The README's --no-wait flow gets the build log back: `wait --output` returns what the
    program printed after input N's line, with any condition, live and once the session ended."""
    sid = bash(cli, tmp_path)
    seq = cli.run("run", sid, "for i in 1 2 3; do echo build-$i; sleep 0.2; done; echo BUILD-DONE", "--no-wait").result["seq"]
    done = cli.run("wait", sid, "--text", "BUILD-DONE", "--output", "--after-seq", str(seq), "--timeout", "20s")
    assert done.code == 0, done.stdout
    assert done.result["output"].startswith("build-1\nbuild-2\nbuild-3\nBUILD-DONE\n"), done.result
    assert "for i in" not in done.result["output"], "the typed line's echo is left out"
    assert done.result["outputTruncated"] is False
    # Without --json, stdout is the output alone, as run's.
    text = cli.run("wait", sid, "--idle-ms", "200", "--output", "--after-seq", str(seq), "--timeout", "20s", json_out=False)
    assert text.code == 0 and text.stdout.startswith("build-1\nbuild-2\nbuild-3\nBUILD-DONE\n"), text.stdout
    # A wait that times out still returns what was printed, and says so on stderr.
    slow = cli.run("run", sid, "echo part-one; sleep 30", "--no-wait").result["seq"]
    timed = cli.run("wait", sid, "--text", "NEVER", "--output", "--after-seq", str(slow), "--timeout", "1s", json_out=False)
    assert timed.code == 11 and timed.stdout.startswith("part-one\n") and "timed out" in timed.stderr, (timed.stdout, timed.stderr)
    cli.run("send-keys", sid, "Ctrl+C")
    # More than a result holds: the last 64 KiB, flagged.
    big = cli.run("run", sid, "seq 1 30000", "--no-wait").result["seq"]
    many = cli.run("wait", sid, "--text", "30000", "--output", "--after-seq", str(big), "--timeout", "30s")
    assert many.code == 0 and many.result["outputTruncated"] is True, many.stdout
    assert len(many.result["output"].encode()) <= 65536 and "\n30000\n" in many.result["output"]
    first, second = many.result["output"].split("\n")[:2]
    assert int(first) + 1 == int(second), "a cut-off output starts at a whole line"
    ran = cli.run("run", sid, "seq 1 30000").result
    assert ran["outputTruncated"] is True and ran["output"].endswith("\n30000\n")
    first, second = ran["output"].split("\n")[:2]
    assert int(first) + 1 == int(second), "a cut-off run output starts at a whole line"
    cli.run("destroy", sid)
    # --exit: everything a program printed, live and, once it ended, from its event log.
    short = cli.create("sh", "-c", "echo ended-1; sleep 0.5; echo ended-2")["sessionId"]
    live = cli.run("wait", short, "--exit", "--output", "--timeout", "20s")
    assert live.code == 0 and live.result["output"] == "ended-1\nended-2\n", live.result
    ended = cli.run("wait", short, "--exit", "--output")
    assert ended.code == 0 and ended.result["ended"] is True and ended.result["output"] == "ended-1\nended-2\n", ended.result


def test_scripted_agent_session(tty: Cli, tmp_path: Path) -> None:
    sid = bash(tty, tmp_path)
    build = 'for i in $(seq 1 2000); do echo "compiling unit $i"; done; echo "BUILD-FINISHED-$((6*7))"'
    started = tty.run("run", sid, build, "--no-wait").result["seq"]
    done = tty.run("wait", sid, "--text", "BUILD-FINISHED-42", "--output", "--after-seq", str(started), "--timeout", "120s")
    assert done.code == 0, done.stdout
    # run hands back the whole output, first line included, whatever the scrollback keeps.
    again = tty.run("run", sid, build, "--timeout", "120s").result
    lines = again["output"].splitlines()
    assert lines[0] == "compiling unit 1" and lines[-1] == "BUILD-FINISHED-42" and len(lines) == 2001
    # The first build's first line is still in the scrollback (10,000 rows keep both builds).
    seen = everything(tty, sid)
    units = [int(line.rsplit(" ", 1)[1]) for line in seen if line.startswith("compiling unit ")]
    assert units == list(range(1, 2001)) * 2, "the scrollback keeps every line of both builds, in order"

    # Interrupt a long command with `signal INT`, as ^C would: its job, not the shell.
    tty.run("run", sid, "sleep 300", "--no-wait")
    shell = tty.run("inspect", sid).result["childPid"]

    def job_started() -> bool:  # bash forked `sleep` into a group of its own, now the terminal's foreground
        try:
            children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
            for child in children:
                fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
                pgrp, foreground = int(fields[2]), int(fields[5])  # stat's pgrp and tpgid
                if pgrp == foreground != shell:
                    return True
        except (OSError, ValueError, IndexError):
            pass
        return False

    wait_until(job_started, what="the sleep job")
    interrupt = tty.run("signal", sid, "INT").result
    assert interrupt["foreground"] is True and interrupt["delivered"] is True
    prompt = tty.run("wait", sid, "--regex", PROMPT_LINE, "--after-seq", str(interrupt["seq"]), "--timeout", "20s")
    assert prompt.code == 0, (interrupt, tty.run("snapshot", sid).result["lines"][-4:])
    after = tty.run("run", sid, "echo after-$((1+1))").result
    assert after["exitStatus"] == 0 and after["output"] == "after-2\n"

    # Neither the screen nor the shell's history holds the marker.
    typed(tty, sid, "echo typed-by-hand; history")
    history = tty.run("run", sid, "history").result["output"]
    assert "7770" not in history and "echo typed-by-hand; history" in history
    assert_no_postamble(everything(tty, sid), "the screen")
    cast = tty.run("record", "export", sid, "--out", str(tmp_path / "session.cast")).result
    assert not any(echo in cast_text(cast["path"]) for echo in ECHO_IN_STREAM)


@pytest.mark.parametrize("program", [("dash",), ("zsh", "-f")], ids=["dash", "zsh"])
def test_other_shells(tty: Cli, tmp_path: Path, program: tuple[str, ...]) -> None:
    if shutil.which(program[0]) is None:
        pytest.skip(f"{program[0]} is not installed")
    ran = shell(tty, tmp_path, *program, name="ran")
    twin = shell(tty, tmp_path, *program, name="twin")
    for command in (f"echo {'x' * n}" for n in (3, 63, 27)):
        assert tty.run("run", ran, command, "--timeout", "20s").result["exitStatus"] == 0
        typed(tty, twin, command)
    settle(tty, ran)
    settle(tty, twin)
    live = everything(tty, ran)
    assert_no_postamble(live, f"{program[0]}'s screen")
    assert live == everything(tty, twin)
    printed = tty.run("run", ran, "printf 'alpha\\nbeta\\n'").result
    assert printed["output"] == "alpha\nbeta\n"
    digest = hashlib.sha256("\n".join(everything(tty, ran)).encode()).hexdigest()
    tty.run("destroy", ran)
    assert hashlib.sha256("\n".join(everything(tty, ran)).encode()).hexdigest() == digest


class _Pty:
    """A shell on a PTY of our own (80x24), for the filter alone: every byte it writes back."""

    def __init__(self, *argv: str) -> None:
        self.fd, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm-256color", "PS1": "$ ", "HISTFILE": "/dev/null"}
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
        os.close(slave)
        self.read()

    def read(self, after: bytes = b"", limit: float = 20.0) -> bytes:
        """Until the prompt is back after `after`, and 50 ms more of quiet."""
        data = b""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            seen = data.find(after)
            done = seen >= 0 and b"$ " in data[seen + len(after) :]
            ready, _, _ = select.select([self.fd], [], [], 0.05 if done else 0.5)
            if not ready:
                if done:
                    break
                continue
            try:
                data += os.read(self.fd, 65536)
            except OSError:
                break
        return data

    def line(self, text: str, after: bytes) -> bytes:
        os.write(self.fd, text.encode() + b"\r")
        return self.read(after)

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        os.close(self.fd)


@pytest.mark.parametrize("program", [("bash", "--norc", "--noprofile"), ("dash",), ("zsh", "-f")], ids=["bash", "dash", "zsh"])
def test_every_margin_position_in_the_postamble(program: tuple[str, ...]) -> None:
    """The margin before, in and after the postamble, the reads cut anywhere: the screen is the
    one of the same line typed without it (`run`'s line, hidden as the host hides it)."""
    from agent_tty.host.echo import DONE, EchoFilter
    from agent_tty.terminal.output import visible
    from agent_tty.terminal.screen import open_screen

    if shutil.which(program[0]) is None:
        pytest.skip(f"{program[0]} is not installed")
    backends = ["pyte"] + (["ghostty"] if HAS_GHOSTTY else [])
    chance = random.Random(7770)
    term = _Pty(*program)
    try:
        for n in [*range(24, 75, 3), 73, 74, 27, 28, 120, 160]:
            command = f"echo {'x' * n}"
            clean = term.line(command, after=b"x" * n + b"\r\n")
            token = f"{chance.getrandbits(48):012x}"
            postamble = f"; printf '\\033]7770;%s;%s\\007' {token} $?"
            raw = term.line(command + postamble, after=f"7770;{token};0".encode())
            for backend in backends:
                want = open_screen(80, 24, None, backend)
                want.feed(b"$ " + clean)
                for cuts in ([], sorted(chance.sample(range(1, len(raw)), 6))):
                    got = open_screen(80, 24, None, backend)
                    got.feed(b"$ ")
                    echo = EchoFilter(command + postamble, len(command))
                    held = b""
                    for start, end in zip([0, *cuts], [*cuts, len(raw)]):
                        data, held = held + raw[start:end], b""
                        decided, hide = echo.scan(data, got, final=end == len(raw))
                        data, held = data[:decided], data[decided:]
                        got.feed(visible(data, hide))
                    assert echo.phase == DONE and got.lines() == want.lines(), (program[0], n, backend, cuts, raw)
    finally:
        term.close()
