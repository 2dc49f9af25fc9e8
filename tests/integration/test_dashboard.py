"""`agent-tty dashboard`, driven inside an agent-tty session of the same Home: its own snapshot
shows the list and the mirrored screen; keys switch, search, pause and quit; a resize redraws;
the terminal is restored on q and on SIGTERM; and it never writes to the Home (ADR 0043)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli, wait_until

pytestmark = pytest.mark.integration


def files_of(home: Path, *, skip: tuple[str, ...] = ()) -> dict[str, tuple[object, ...]]:
    """Every entry of the Home but the skipped session folders and their sockets: a file's
    mode, size and mtime in ns; a folder's mode and the names in it (its mtime changes when
    the skipped session's folder or socket is added)."""
    found: dict[str, tuple[object, ...]] = {}
    for folder, dirs, names in os.walk(home):
        dirs[:] = [d for d in dirs if not d.startswith(skip)]
        kept = sorted(n for n in [*dirs, *names] if not n.startswith(skip))
        found[str(Path(folder).relative_to(home))] = (os.lstat(folder).st_mode, *kept)
        for name in names:
            if name.startswith(skip):
                continue
            info = Path(folder, name).lstat()
            found[str(Path(folder, name).relative_to(home))] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return found


def wait_text(cli: Cli, sid: str, text: str, timeout: str = "15s") -> None:
    done = cli.run("wait", sid, "--text", text, "--timeout", timeout)
    assert done.code == 0 and done.result["matched"], (text, cli.run("snapshot", sid).result["lines"])


def screen(cli: Cli, sid: str) -> dict:  # type: ignore[type-arg]
    return cli.run("snapshot", sid).result


def dashboard_cmd(cli: Cli, *args: str) -> list[str]:
    return [*cli.command, "dashboard", *args]


def start_dashboard(cli: Cli, *args: str, cols: int = 100, rows: int = 30) -> dict:  # type: ignore[type-arg]
    return cli.create(
        *dashboard_cmd(cli, *args),
        options=("--name", "dash", "--cols", str(cols), "--rows", str(rows), "--env", f"AGENT_TTY_HOME={cli.home}"),
    )


def read_only_fds(pid: int, home: Path) -> None:
    """The dashboard holds no socket, and every file of the Home it holds is open read-only."""
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            flags = int(Path(f"/proc/{pid}/fdinfo/{fd}").read_text().split("flags:")[1].split()[0], 8)
        except OSError:
            continue  # closed meanwhile
        assert not target.startswith("socket:"), (fd, target)
        if target.startswith(str(home)):
            assert flags & os.O_ACCMODE == os.O_RDONLY, (fd, target, oct(flags))


def test_dashboard_lists_mirrors_switches_resizes_and_quits_without_writing(tty: Cli) -> None:
    cli = tty  # the host's and the mirror's screen backend: both ghostty, then both pyte
    first = cli.create("sh", "-c", "echo HELLO-FROM-ALPHA; exec sleep 600", options=("--name", "alpha"))["sessionId"]
    second = cli.create("bash", "--norc", "--noprofile", options=("--name", "beta", "--env", "PS1=$ "))["sessionId"]
    wait_text(cli, first, "HELLO-FROM-ALPHA")
    cli.run("type", second, "echo WORLD-FROM-$((6*7))")
    cli.run("send-keys", second, "Enter")
    wait_text(cli, second, "WORLD-FROM-42")
    cli.run("wait", second, "--idle-ms", "300", "--timeout", "10s")
    before = files_of(cli.home)

    dash = start_dashboard(cli)
    sid, pid = dash["sessionId"], dash["childPid"]
    # The list (oldest first, its own session left out) and the first session mirrored.
    wait_text(cli, sid, "HELLO-FROM-ALPHA")
    lines = screen(cli, sid)["lines"]
    listed = [line for line in lines if line.startswith(("> ", "  ")) and "running" in line]
    assert [line.split()[1] if line.startswith(">") else line.split()[0] for line in listed[:2]] == ["alpha", "beta"], lines
    assert not any(" dash " in line.split("│")[0] for line in lines), lines
    assert "2 sessions" in lines[0] and first in "\n".join(lines)
    read_only_fds(pid, cli.home)

    # j switches to beta: its screen, replayed from its log, replaces alpha's.
    cli.run("send-keys", sid, "j")
    wait_text(cli, sid, "WORLD-FROM-42")
    text = screen(cli, sid)["text"]
    assert "HELLO-FROM-ALPHA" not in text and second in text
    # k (and Up) go back; / searches by name; Escape clears the search.
    cli.run("send-keys", sid, "k")
    wait_text(cli, sid, "HELLO-FROM-ALPHA")
    cli.run("send-keys", sid, "/", "b", "e", "t")
    wait_text(cli, sid, "/bet_")
    wait_text(cli, sid, "WORLD-FROM-42")
    cli.run("send-keys", sid, "Enter")
    wait_text(cli, sid, "1 session matching 'bet'")
    cli.run("send-keys", sid, "Escape")
    wait_text(cli, sid, "2 sessions ")

    # The Home is as it was: the dashboard wrote nothing (its own session's files aside).
    assert files_of(cli.home, skip=(sid,)) == before

    # Live: what beta prints now shows up in the mirror as the program prints it; paused, not.
    cli.run("send-keys", sid, "Down")
    wait_text(cli, sid, "WORLD-FROM-42")
    cli.run("type", second, "echo LIVE-$((7*7))")
    cli.run("send-keys", second, "Enter")
    wait_text(cli, sid, "LIVE-49")
    cli.run("send-keys", sid, "Space")
    wait_text(cli, sid, "[PAUSED]")
    cli.run("type", second, "echo HELD-$((8*8))")
    cli.run("send-keys", second, "Enter")
    wait_text(cli, second, "HELD-64")
    cli.run("wait", sid, "--idle-ms", "500", "--timeout", "10s")
    assert "HELD-64" not in screen(cli, sid)["text"]
    cli.run("send-keys", sid, "Space")
    wait_text(cli, sid, "HELD-64")

    # A resize redraws: below 60 columns the list sits above the mirror; a tiny size still draws.
    assert cli.run("resize", sid, "--cols", "50", "--rows", "12").code == 0
    narrow = wait_until(lambda: (s := screen(cli, sid)) and s["cols"] == 50 and not any("│" in l for l in s["lines"]) and "HELD-64" in s["text"] and s, what="the narrow layout")
    assert narrow["lines"][1].startswith("  alpha") and narrow["lines"][2].startswith("> beta"), narrow["lines"]
    assert cli.run("resize", sid, "--cols", "20", "--rows", "5").code == 0
    tiny = wait_until(lambda: (s := screen(cli, sid)) and s["cols"] == 20 and s["lines"][-1].startswith(" j/k") and s, what="the tiny frame")
    assert tiny["lines"][0].startswith(" agent-tty dashboard") and "beta" in tiny["lines"][1], tiny["lines"]
    assert cli.run("resize", sid, "--cols", "100", "--rows", "30").code == 0
    wait_until(lambda: "│" in screen(cli, sid)["text"], what="the wide layout again")

    # q quits with 0, and the terminal is as it found it: the primary screen, the cursor shown.
    cli.run("send-keys", sid, "q")
    ended = cli.run("wait", sid, "--exit", "--timeout", "15s")
    assert ended.code == 0 and ended.result.get("exitCode") == 0, ended.stdout
    last = screen(cli, sid)
    assert last["alternateScreen"] is False and last["cursor"]["visible"] is True, last
    after = files_of(cli.home, skip=(sid,))
    grown = f"sessions/{second}/events.jsonl"
    assert {k: v for k, v in after.items() if k != grown} == {k: v for k, v in before.items() if k != grown}


def test_sigterm_restores_the_terminal(cli: Cli) -> None:
    cli.create("sh", "-c", "echo SOMETHING-TO-SHOW; exec sleep 600", options=("--name", "shown"))
    sid = start_dashboard(cli, cols=80, rows=20)["sessionId"]
    wait_text(cli, sid, "SOMETHING-TO-SHOW")
    assert screen(cli, sid)["alternateScreen"] is True
    assert cli.run("signal", sid, "TERM").code == 0
    ended = cli.run("wait", sid, "--exit", "--timeout", "15s")
    assert ended.code == 0 and ended.result.get("exitCode") == 128 + 15, ended.stdout
    last = screen(cli, sid)
    assert last["alternateScreen"] is False and last["cursor"]["visible"] is True, last


def test_once_prints_one_frame_and_needs_no_terminal(tty: Cli) -> None:
    cli = tty
    sid = cli.create("sh", "-c", "printf 'ONE-FRAME \\033[1mbold\\033[0m\\n'; exec sleep 600", options=("--name", "framed"))["sessionId"]
    wait_text(cli, sid, "ONE-FRAME")
    before = files_of(cli.home)
    done = cli.run("dashboard", "--once", "--cols", "70", "--rows", "8")
    assert done.code == 0, done.stdout
    result = done.result
    assert result["cols"] == 70 and result["rows"] == 8 and len(result["lines"]) == 8
    assert result["sessions"] == [sid] and result["selected"] == sid
    assert re.match(r"> framed +running", result["lines"][1]), result["lines"]
    assert "ONE-FRAME bold" in result["lines"][2]
    plain = cli.run("dashboard", "--once", "--cols", "20", "--rows", "5", json_out=False)
    assert plain.code == 0 and plain.stdout.splitlines()[0] == " agent-tty dashboard"
    assert files_of(cli.home) == before

    # Without a terminal and without --once: a usage error, not a traceback or a garbled screen.
    no_tty = cli.run("dashboard")
    assert no_tty.code == 2 and no_tty.error["code"] == "USAGE" and "--once" in no_tty.error["message"]
    for bad in (["--once", "--cols", "0"], ["--cols", "80"], ["--once", "--select", "nothing-here"]):
        refused = cli.run("dashboard", *bad)
        assert refused.code == 2 and refused.error["code"] == "INVALID_INPUT", (bad, refused.stdout)


def test_an_empty_home_draws_at_any_size(cli: Cli) -> None:
    for cols, rows in ((1, 1), (2, 2), (20, 5), (59, 3), (60, 3), (300, 100)):
        done = cli.run("dashboard", "--once", "--cols", str(cols), "--rows", str(rows))
        assert done.code == 0, (cols, rows, done.stdout)
        lines = done.result["lines"]
        assert len(lines) == rows and all(len(line) <= cols for line in lines), (cols, rows, lines)
    assert not cli.home.exists() or not any(cli.home.iterdir())


FLOOD = """
import sys, time
sys.stdout.write('READY\\n'); sys.stdout.flush()
sys.stdin.readline()
line = 'x' * 60
for i in range((6 << 20) // 72):
    sys.stdout.write(f'line {i:08d} {line}\\n')
sys.stdout.write('FLOOD-DONE\\n')
sys.stdout.flush()
time.sleep(600)
"""


@pytest.mark.timeout(300)
def test_the_mirror_follows_the_log_through_its_rotations(cli: Cli) -> None:
    # 6 MiB of output with 2 MiB segments: the host renames a new events.jsonl (starting with a
    # checkpoint) over the one the dashboard has open, twice or more, while it follows.
    flood = cli.run("create", "--name", "flood", "--", sys.executable, "-c", FLOOD, env={"AGENT_TTY_LOG_SEGMENT_MB": "2"}).result["sessionId"]
    wait_text(cli, flood, "READY")
    sid = start_dashboard(cli)["sessionId"]
    wait_text(cli, sid, "READY")
    # Held open, so that its inode cannot be freed and given to a later file of the log.
    with open(cli.folder(flood) / "events.jsonl", "rb") as first_log:
        cli.run("send-keys", flood, "Enter")
        wait_text(cli, flood, "FLOOD-DONE", timeout="120s")
        assert os.lstat(cli.folder(flood) / "events.jsonl").st_ino != os.fstat(first_log.fileno()).st_ino  # it rotated
    wait_text(cli, sid, "FLOOD-DONE", timeout="60s")
    # What the pane shows is the session's own screen, clipped to the pane's 66 columns.
    cli.run("wait", sid, "--screen-stable-ms", "300", "--timeout", "20s")
    mirrored = [row.split("│", 1)[1].rstrip() for row in screen(cli, sid)["lines"][2:26]]
    assert mirrored == [line[:66].rstrip() for line in screen(cli, flood)["lines"]]
    cli.run("send-keys", sid, "q")
    assert cli.run("wait", sid, "--exit", "--timeout", "15s").result.get("exitCode") == 0
