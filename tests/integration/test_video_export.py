"""`record export --format webm|mp4|gif`: a video of a real vim session whose frames are the
screenshots taken at the same seq (issue 28.3, ADR 0044).

The GIF's frames are compared pixel for pixel: the session runs with TERM=vt100, so vim draws in
the default colours and a frame has ~230 colours (antialiased grey), which a GIF keeps exactly.
webm and mp4 are lossy (4:2:0): each decoded frame is shown to be nearest, by mean pixel
difference, to the screenshot of its moment and far nearer than to the other screenshots.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageSequence, ImageStat

from agent_tty.schema import validate_envelope
from tests.conftest import Cli

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

VIM = shutil.which("vim")


def _run(cli: Cli, *args: str) -> dict:
    done = cli.run(*args, timeout=120)
    assert done.code == 0, (args, done.stdout, done.stderr)
    validate_envelope(done.doc)
    return done.result


def _shot(cli: Cli, session_id: str) -> tuple[Image.Image, int]:
    result = _run(cli, "screenshot", session_id)
    return Image.open(result["path"]).convert("RGB"), result["seq"]


def _gif_frames(path: Path) -> tuple[list[Image.Image], list[int]]:
    with Image.open(path) as gif:
        frames = [frame.convert("RGB").copy() for frame in ImageSequence.Iterator(gif)]
    with Image.open(path) as gif:
        delays = [frame.info["duration"] for frame in ImageSequence.Iterator(gif)]
    return frames, delays


def _av_frames(path: Path) -> tuple[list[Image.Image], float, tuple[int, int], str]:
    import av

    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        codec = stream.codec_context.name
        frames = [frame.to_image() for frame in container.decode(video=0)]
        duration = container.duration / 1_000_000
    return frames, duration, frames[0].size, codec


def _mean_diff(a: Image.Image, b: Image.Image) -> float:
    return sum(ImageStat.Stat(ImageChops.difference(a.crop((0, 0, *b.size)), b)).mean) / 3


def _vim_session(cli: Cli, tmp_path: Path) -> tuple[str, list[tuple[Image.Image, int]]]:
    """A vim session driven through three screens, a screenshot of each; then vim quits."""
    text = tmp_path / "poem.txt"
    text.write_text("".join(f"line {n}: the quick brown fox\n" for n in range(1, 61)))
    session = cli.create(VIM, "-u", "NONE", "-N", "-n", str(text), options=("--term", "vt100", "--cols", "60", "--rows", "16"))
    sid = session["sessionId"]
    shots = []
    _run(cli, "wait", sid, "--text", "line 15", "--timeout", "20000")
    _run(cli, "wait", sid, "--screen-stable-ms", "400", "--timeout", "20000")
    shots.append(_shot(cli, sid))
    _run(cli, "send-keys", sid, "G")
    _run(cli, "wait", sid, "--text", "line 60", "--timeout", "20000")
    _run(cli, "wait", sid, "--screen-stable-ms", "400", "--timeout", "20000")
    shots.append(_shot(cli, sid))
    _run(cli, "type", sid, "Ohello, video")
    _run(cli, "send-keys", sid, "Escape")
    _run(cli, "wait", sid, "--text", "hello, video", "--timeout", "20000")
    _run(cli, "wait", sid, "--screen-stable-ms", "400", "--timeout", "20000")
    shots.append(_shot(cli, sid))
    _run(cli, "type", sid, ":q!")
    _run(cli, "send-keys", sid, "Enter")
    _run(cli, "wait", sid, "--exit", "--timeout", "20000")
    return sid, shots


@pytest.mark.skipif(VIM is None, reason="vim is not installed (.ci/run installs it)")
def test_vim_video_frames_are_the_screenshots_at_their_seq(cli: Cli, tmp_path: Path) -> None:
    sid, shots = _vim_session(cli, tmp_path)
    assert [seq for _image, seq in shots] == sorted({seq for _image, seq in shots}), shots

    gif = _run(cli, "record", "export", sid, "--format", "gif", "--out", str(tmp_path / "vim.gif"))
    frames, delays = _gif_frames(tmp_path / "vim.gif")
    assert gif["format"] == "gif" and Path(gif["path"]) == tmp_path / "vim.gif"
    assert len(frames) == gif["frames"] >= len(shots), (len(frames), gif)
    assert frames[0].size == (gif["width"], gif["height"])
    assert abs(sum(delays) / 1000 - gif["duration"]) < 0.05 * len(frames) + 0.05, (delays, gif)
    # Each screenshot is one of the frames, pixel for pixel, in the order they were taken.
    at = []
    for image, seq in shots:
        exact = [i for i, frame in enumerate(frames) if ImageChops.difference(frame.crop((0, 0, *image.size)), image).getbbox() is None]
        assert exact, f"no frame of the gif is the screenshot at seq {seq}"
        at.append(exact[0])
    assert at == sorted(at) and len(set(at)) == len(at), at

    for fmt, codec in (("webm", "vp9"), ("mp4", "h264")):
        result = _run(cli, "record", "export", sid, "--format", fmt, "--out", str(tmp_path / f"vim.{fmt}"))
        assert result["frames"] == gif["frames"] and result["duration"] == gif["duration"], (result, gif)
        decoded, duration, size, name = _av_frames(tmp_path / f"vim.{fmt}")
        assert name == codec, name
        assert size == (result["width"], result["height"]) == (gif["width"], gif["height"])
        assert len(decoded) >= result["frames"], (len(decoded), result)
        assert abs(duration - result["duration"]) < 0.3, (duration, result)
        # The frame shown where the gif showed screenshot i is nearest to screenshot i.
        for i, (image, seq) in enumerate(shots):
            frame = min(decoded, key=lambda candidate: _mean_diff(candidate, image))
            near = _mean_diff(frame, image)
            others = [_mean_diff(frame, other) for j, (other, _seq) in enumerate(shots) if j != i]
            assert near < 2.0 and all(near * 3 < other for other in others), (fmt, seq, near, others)

    # The default place: the session's artifacts.
    saved = _run(cli, "record", "export", sid, "--format", "gif")
    assert Path(saved["path"]) == cli.folder(sid) / "artifacts" / "recording.gif"
    assert saved["sha256"] == gif["sha256"], "the same log makes the same gif"


def test_speed_and_max_idle_shape_the_timeline(cli: Cli, tmp_path: Path) -> None:
    session = cli.create("sh", "-c", "printf 'one\\n'; sleep 3; printf 'two\\n'; sleep 1; printf 'three\\n'")
    sid = session["sessionId"]
    _run(cli, "wait", sid, "--exit", "--timeout", "20000")
    capped = _run(cli, "record", "export", sid, "--format", "gif", "--out", str(tmp_path / "a.gif"))
    whole = _run(cli, "record", "export", sid, "--format", "gif", "--max-idle", "0", "--out", str(tmp_path / "b.gif"))
    fast = _run(cli, "record", "export", sid, "--format", "gif", "--max-idle", "0", "--speed", "4", "--out", str(tmp_path / "c.gif"))
    assert capped["maxIdle"] == 2.0 and whole["maxIdle"] == 0 and fast["speed"] == 4.0
    # The 3 s pause is kept whole only without a cap; --speed 4 plays it in a quarter.
    assert 4.0 <= whole["duration"] < 6.0, whole
    assert capped["duration"] <= whole["duration"] - 0.9, (capped, whole)
    assert abs(fast["duration"] - whole["duration"] / 4) < 0.3, (fast, whole)
    for name, result in (("a", capped), ("b", whole), ("c", fast)):
        frames, delays = _gif_frames(tmp_path / f"{name}.gif")
        assert len(frames) == result["frames"] and result["frames"] >= 3, result
        assert abs(sum(delays) / 1000 - result["duration"]) < 0.05 * len(frames) + 0.05, (delays, result)
    # Three lines printed: the last frame shows all three, as a screenshot of the ended session does.
    shot, _seq = _shot(cli, sid)
    last = _gif_frames(tmp_path / "a.gif")[0][-1]
    assert ImageChops.difference(last.crop((0, 0, *shot.size)), shot).getbbox() is None


@pytest.mark.parametrize(
    "args",
    [
        ("--format", "mkv"),
        ("--format", "gif", "--speed", "0"),
        ("--format", "gif", "--speed", "-2"),
        ("--format", "webm", "--speed", "fast"),
        ("--format", "mp4", "--speed", "nan"),
        ("--format", "gif", "--fps", "0"),
        ("--format", "gif", "--fps", "61"),
        ("--format", "gif", "--max-idle", "soon"),
        ("--format", "asciicast", "--speed", "2"),
    ],
)
def test_bad_video_options_are_exit_2_before_the_session_is_read(cli: Cli, args: tuple[str, ...]) -> None:
    done = cli.run("record", "export", "nosuchsession", *args)
    assert done.code == 2, (done.code, done.stdout, done.stderr)
    validate_envelope(done.doc)
    assert done.error["code"] in ("INVALID_INPUT", "USAGE"), done.error


def test_a_good_video_export_of_no_session_is_session_not_found(cli: Cli) -> None:
    done = cli.run("record", "export", "nosuchsession", "--format", "gif")
    assert done.code == 3 and done.error["code"] == "SESSION_NOT_FOUND", done.stdout


def test_doctor_says_what_video_needs(cli: Cli) -> None:
    done = cli.run("doctor")
    video = done.doc["result"]["video"]
    assert video["formats"] == {"gif": True, "webm": True, "mp4": True}, video
    assert video["pyav"] and video["install"] is None, video
    plain = cli.run("doctor", json_out=False)
    assert "video      gif, webm, mp4 (PyAV " in plain.stdout, plain.stdout
