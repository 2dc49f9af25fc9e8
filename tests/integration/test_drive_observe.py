"""run, type, paste, send-keys, wait, snapshot, screenshot, record export: on both screen backends."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli, wait_until

pytestmark = pytest.mark.integration
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(name: str, *args: str) -> tuple[str, ...]:
    return (sys.executable, str(FIXTURES / name), *args)


def bash(cli: Cli) -> str:
    return cli.create("bash", "--norc", "--noprofile", options=("--env", "PS1=$ "))["sessionId"]


def test_canonical_loop(tty: Cli, tmp_path: Path) -> None:
    sid = bash(tty)
    ran = tty.run("run", sid, 'printf "hel%s\\n" lo').result
    assert ran["completed"] is True and ran["exitStatus"] == 0
    assert tty.run("wait", sid, "--text", "hello", "--timeout", "5s").result["matched"] is True
    snap = tty.run("snapshot", sid).result
    assert "hello" in snap["lines"]
    assert snap["backend"] == tty.backend  # type: ignore[attr-defined]
    assert len(snap["screenHash"]) == 64 and snap["cols"] == 80 and snap["rows"] == 24

    shot = tty.run("screenshot", sid, "--out", str(tmp_path / "shot.png")).result
    from PIL import Image

    with Image.open(shot["path"]) as image:
        assert image.format == "PNG" and image.size == (shot["width"], shot["height"])
        assert len(image.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 2, "the screenshot shows text"
    assert (tmp_path / "shot.png").read_bytes() == Path(shot["path"]).read_bytes()

    cast = tty.run("record", "export", sid, "--format", "asciicast", "--out", str(tmp_path / "s.cast")).result
    assert cast["events"] >= 2
    asciinema = shutil.which("asciinema") or str(Path(sys.executable).with_name("asciinema"))
    played = subprocess.run([asciinema, "cat", cast["path"]], capture_output=True, text=True, timeout=30)
    assert played.returncode == 0, played.stderr
    assert "hello" in played.stdout

    assert tty.run("destroy", sid).result["destroyed"] is True
    # An ended session is snapshotted and exported from its event log.
    after = tty.run("snapshot", sid).result
    assert after["source"] == "replay" and "hello" in after["lines"]
    assert tty.run("record", "export", sid).result["path"].endswith("artifacts/recording.cast")


def test_full_screen_program(tty: Cli, tmp_path: Path) -> None:
    text = tmp_path / "long.txt"
    text.write_text("".join(f"row {i}\n" for i in range(200)))
    sid = tty.create("less", str(text), options=("--env", "LESS=", "--env", "LESSHISTFILE=-"))["sessionId"]
    tty.run("wait", sid, "--text", "row 0", "--timeout", "10s")
    first = tty.run("snapshot", sid).result
    assert first["alternateScreen"] is True
    keys = tty.run("send-keys", sid, "PageDown").result
    tty.run("wait", sid, "--text", "row 30", "--after-seq", str(keys["seq"]), "--timeout", "10s")
    assert tty.run("snapshot", sid).result["alternateScreen"] is True
    shot = tty.run("screenshot", sid).result
    assert Path(shot["path"]).exists()
    tty.run("send-keys", sid, "q")
    done = tty.run("wait", sid, "--exit", "--timeout", "10s").result
    assert done["matched"] is True
    wait_until(lambda: tty.manifest(sid)["status"] == "exited", what="less to exit")
    assert tty.manifest(sid)["exitCode"] == 0
    assert tty.run("snapshot", sid).result["alternateScreen"] is False


def test_cursor_position_query_gets_an_answer(tty: Cli) -> None:
    sid = tty.create(*fixture("query_cursor.py"))["sessionId"]
    done = tty.run("wait", sid, "--text", "cursor-reply", "--timeout", "10s")
    assert done.code == 0, done.stdout
    assert "cursor-reply [3;5R" in "\n".join(tty.run("snapshot", sid).result["lines"])


def test_wait_baseline_never_matches_stale_text(tty: Cli) -> None:
    sid = bash(tty)
    tty.run("run", sid, "echo stale-$((40+2))")
    tty.run("wait", sid, "--text", "stale-42", "--timeout", "5s")
    typed = tty.run("type", sid, "true").result
    stale = tty.run("wait", sid, "--text", "stale-42", "--after-seq", str(typed["seq"]), "--timeout", "700ms")
    assert stale.code == 11 and stale.result["timedOut"] is True and stale.result["matched"] is False
    assert tty.run("wait", sid, "--text", "stale-42", "--after-seq", "last", "--timeout", "300ms").code == 11
    tty.run("send-keys", sid, "Enter")
    fresh = tty.run("run", sid, "echo stale-$((40+2))", "--no-wait").result
    again = tty.run("wait", sid, "--text", "stale-42", "--after-seq", str(fresh["seq"]), "--timeout", "5s")
    assert again.code == 0 and again.result["matched"] is True


def test_replay_equals_the_last_live_snapshot(tty: Cli) -> None:
    for args in ([], ["--alt"], ["--hide-cursor"]):
        sid = tty.create(*fixture("draw.py", *args), options=("--cols", "60", "--rows", "12"))["sessionId"]
        tty.run("wait", sid, "--text", "line 29", "--timeout", "10s")
        if args == ["--alt"]:
            tty.run("wait", sid, "--text", "here", "--timeout", "10s")
        tty.run("wait", sid, "--screen-stable-ms", "200", "--timeout", "10s")
        live = tty.run("snapshot", sid, "--format", "structured", "--scrollback").result
        tty.run("type", sid, "q")
        tty.run("wait", sid, "--exit", "--timeout", "10s")
        wait_until(lambda: tty.manifest(sid)["status"] == "exited", what="exit")
        replayed = tty.run("snapshot", sid, "--format", "structured", "--scrollback").result
        assert replayed["source"] == "replay" and live["source"] == "live"
        for key in ("lines", "cells", "cursor", "alternateScreen", "title", "screenHash", "scrollback", "cols", "rows"):
            assert replayed[key] == live[key], (args, key)
        assert live["title"] == "draw-title"
        assert live["alternateScreen"] is (args == ["--alt"])
        row0 = live["cells"][0] if args != ["--alt"] else None
        if row0 is not None and not live["scrollback"]:
            pass
        if args == ["--hide-cursor"]:
            assert live["cursor"]["visible"] is False


def test_colours_and_attributes_in_structured_snapshot(tty: Cli) -> None:
    sid = tty.create(*fixture("draw.py"), options=("--cols", "80", "--rows", "40"))["sessionId"]
    tty.run("wait", sid, "--text", "line 29", "--timeout", "10s")
    snap = tty.run("snapshot", sid, "--format", "structured").result
    row = snap["cells"][0]
    text = "".join(cell["char"] for cell in row)
    assert text.startswith("primary bold red under 208 inverse rgb")
    bold_red = row[text.index("bold red")]
    assert bold_red["bold"] is True and bold_red["fg"] == 1
    under = row[text.index("under 208")]
    assert under["underline"] is True and under["fg"] in (208, "#ff8700")
    inverse = row[text.index("inverse rgb")]
    assert inverse["inverse"] is True and inverse["fg"] == "#0ac81e"
    tty.run("type", sid, "q")


def test_send_keys_respects_application_cursor_mode(tty: Cli) -> None:
    for mode, expected in (([], "\\x1b[A"), (["app-cursor"], "\\x1bOA")):
        sid = tty.create(*fixture("echo_input.py", *mode))["sessionId"]
        tty.run("wait", sid, "--text", "ready", "--timeout", "10s")
        tty.run("send-keys", sid, "Up", "Ctrl+C", "Tab", ".")
        tty.run("wait", sid, "--text", "got", "--timeout", "10s")
        screen = "\n".join(tty.run("snapshot", sid).result["lines"])
        assert f"got b'{expected}\\x03\\t.'" in screen, screen
        tty.run("type", sid, "x")


def test_paste_is_bracketed_when_the_program_asks(tty: Cli) -> None:
    for mode, expected in (([], "b'one two.'"), (["bracketed-paste"], "b'\\x1b[200~one two.\\x1b[201~'")):
        sid = tty.create(*fixture("echo_input.py", *mode))["sessionId"]
        tty.run("wait", sid, "--text", "ready", "--timeout", "10s")
        tty.run("paste", sid, "one two.")
        tty.run("wait", sid, "--text", "got", "--timeout", "10s")
        assert f"got {expected}" in "\n".join(tty.run("snapshot", sid).result["lines"])
        tty.run("type", sid, "x")


def test_wait_conditions(tty: Cli) -> None:
    # The program outlives a slow CLI start (a loaded machine took over 1.3 s): the idle and
    # regex waits must find it running.
    sid = tty.create("sh", "-c", "echo start; sleep 1; echo done; sleep 3")["sessionId"]
    idle = tty.run("wait", sid, "--idle-ms", "300", "--timeout", "10s").result
    assert idle["matched"] is True
    assert tty.run("wait", sid, "--regex", r"^d.ne$", "--timeout", "10s").result["matched"] is True
    assert tty.run("wait", sid, "--exit", "--timeout", "10s").result["matched"] is True
    wait_until(lambda: tty.manifest(sid)["status"] == "exited", what="exit")
    # After the end: judged on the last screen, at once.
    assert tty.run("wait", sid, "--text", "done").result["matched"] is True
    missing = tty.run("wait", sid, "--text", "never-printed")
    assert missing.code == 4 and missing.error["code"] == "SESSION_NOT_RUNNING"


def test_input_to_an_ended_session_is_exit_4(tty: Cli) -> None:
    sid = tty.create("true")["sessionId"]
    wait_until(lambda: tty.manifest(sid)["status"] == "exited", what="exit")
    for args in (["type", sid, "x"], ["paste", sid, "x"], ["send-keys", sid, "Enter"], ["run", sid, "ls"], ["mark", sid, "m"]):
        done = tty.run(*args)
        assert done.code == 4 and done.error["code"] == "SESSION_NOT_RUNNING", args


def test_marks_and_resizes_reach_the_recording(tty: Cli, tmp_path: Path) -> None:
    sid = bash(tty)
    mark = tty.run("mark", sid, "checkpoint").result
    assert mark["label"] == "checkpoint" and mark["seq"] > 0
    tty.run("resize", sid, "--cols", "100", "--rows", "30")
    tty.run("run", sid, "echo after")
    out = tmp_path / "r.cast"
    tty.run("record", "export", sid, "--out", str(out))
    import json

    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["version"] == 2 and lines[0]["width"] == 80
    assert [1, "m", "checkpoint"][1:] in [event[1:] for event in lines[1:]]
    assert [1, "r", "100x30"][1:] in [event[1:] for event in lines[1:]]
    snap = tty.run("snapshot", sid).result
    assert (snap["cols"], snap["rows"]) == (100, 30)


def test_large_output_does_not_stall_the_host(tty: Cli, tmp_path: Path) -> None:
    size = 2_000_000 if tty.backend == "ghostty" else 200_000  # type: ignore[attr-defined]
    big = tmp_path / "big.txt"
    big.write_text(("x" * 99 + "\n") * (size // 100) + "the-end\n")
    sid = tty.create("sh", "-c", f"cat {big}; sleep 300")["sessionId"]
    assert tty.run("wait", sid, "--text", "the-end", "--timeout", "60s").result["matched"] is True
    assert "the-end" in tty.run("snapshot", sid).result["lines"]


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["send-keys", "SID", "Enter", "Bogus"], "Bogus"),
        (["wait", "SID", "--regex", "(unclosed"], "(unclosed"),
        (["wait", "SID", "--text", "x", "--timeout", "-5"], "-5"),
        (["wait", "SID", "--text", "x", "--regex", "y"], "exactly one"),
        (["snapshot", "SID", "--format", "html"], "html"),
        (["record", "export", "SID", "--format", "avi"], "avi"),
        (["run", "SID", "ls", "--timeout", "soon"], "soon"),
        (["wait", "SID", "--text", "x", "--after-seq", "first"], "first"),
    ],
)
def test_bad_input_names_the_value(cli: Cli, args: list[str], fragment: str) -> None:
    sid = cli.create("sleep", "300")["sessionId"]
    done = cli.run(*[sid if a == "SID" else a for a in args])
    assert done.code == 2, (done.stdout, done.stderr)
    assert fragment in done.error["message"]
