"""Video of a session (webm, mp4, gif) from its event log, drawn by the screenshot renderer.

The log is replayed into a screen model as `record export --format asciicast` reads it (segments,
checkpoints: asciicast._events). The timeline is sampled at `fps`: each slot shows the screen as
it stood after the last event before the slot, and a frame is drawn only when the screen's cells
differ from the frame shown, so a still screen costs one frame however long it stays, and a
frame is held until the screen changes. Each frame is render.render_image of the replayed
screen's structured snapshot: the picture `screenshot` saves at that seq (ADR 0044).

Timing is the log's, each gap capped at `max_idle` seconds (0: no cap) and then divided by
`speed`, as asciinema's idle-time limit and speed work. GIF is written here, with Pillow, a
frame at a time (only the rectangle that changed, exact colours while a frame has 256 or fewer);
webm (VP9) and mp4 (H.264) go through PyAV, the `video` extra.
"""

from __future__ import annotations

import hashlib
import io
import math
import pickle
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_tty.terminal.screen import DEFAULT_BG

FORMATS = ("webm", "mp4", "gif")
AV_FORMATS = {"webm": ("webm", "libvpx-vp9"), "mp4": ("mp4", "libx264")}
VIDEO_INSTALL = "pip install 'agent-tty[video]'"
MAX_IDLE = 2.0
"""Seconds: the longest gap a video keeps by default (asciinema's --idle-time-limit habit)."""
FPS = 10
FPS_MAX = 60
CHUNK = 1 << 20


@dataclass
class VideoStats:
    """What the export counted, complete once its chunks are all read."""

    frames: int = 0
    """Distinct pictures drawn (each held for its duration)."""
    samples: int = 0
    events: int = 0
    duration: float = 0.0
    """Seconds of video."""
    width: int = 0
    height: int = 0
    last_seq: int = 0
    frame_seqs: list[int] = field(default_factory=list)
    """The seq each frame shows, in order."""


@dataclass
class Frame:
    image: Any
    start: float
    end: float
    seq: int


def _timeline(files: list[Path], speed: float, max_idle: float) -> Iterator[tuple[float, Any]]:
    """(video time in seconds, event) for every event of the log, in order."""
    from agent_tty.terminal.asciicast import _events

    previous = 0.0
    now = 0.0
    for event, base, _head in _events(files, "", None):
        if event is None:
            continue
        at = max(0.0, event.time - base)
        gap = max(0.0, at - previous)
        if max_idle > 0:
            gap = min(gap, max_idle)
        now += gap / speed
        previous = at
        yield now, event


def _canvas_size(files: list[Path]) -> tuple[int, int]:
    """The largest screen the log shows, in pixels: every frame is drawn on a canvas of it
    (even sides, as H.264's 4:2:0 needs), so a resize does not change the video's size."""
    from agent_tty.terminal.asciicast import _events
    from agent_tty.terminal.render import PADDING, cells

    cols = rows = 0
    for event, _base, head in _events(files, "", None):
        if head is not None:
            import json

            first = json.loads(head)
            cols, rows = max(cols, first["width"]), max(rows, first["height"])
        if event is not None and event.type == "resize" and event.cols and event.rows:
            cols, rows = max(cols, event.cols), max(rows, event.rows)
    grid = cells()
    width, height = cols * grid.width + 2 * PADDING, rows * grid.height + 2 * PADDING
    return width + width % 2, height + height % 2


def frames(
    files: list[Path], stats: VideoStats, fps: int = FPS, speed: float = 1.0, max_idle: float = MAX_IDLE, backend: str | None = None
) -> Iterator[Frame]:
    """Each distinct picture of the session with when it shows, as the log is read."""
    from agent_tty.terminal.render import render_image
    from agent_tty.terminal.replay import _check_logged_size, output_bytes, shown_bytes
    from agent_tty.terminal.screen import snapshot as screen_snapshot

    width, height = stats.width, stats.height
    screen = None
    shown: Frame | None = None
    shown_key = b""
    slot = 0  # the next slot is at slot / fps seconds
    dirty = False
    seq = 0

    def sample(at: float) -> Frame | None:
        """The frame that ends at `at` when the screen now differs from the one shown."""
        nonlocal shown, shown_key
        assert screen is not None
        stats.samples += 1
        snap = screen_snapshot(screen, seq, structured=True)
        # Everything the picture is drawn from (pickle: a third of repr's time on 80x24 cells).
        key = hashlib.sha256(pickle.dumps((snap["cols"], snap["rows"], snap["cursor"], snap["cells"]), 5)).digest()
        if shown is not None and key == shown_key:
            shown.seq = seq  # the same picture, now of a later seq
            return None
        image = render_image(snap)
        if image.size != (width, height):
            from PIL import Image

            canvas = Image.new("RGB", (width, height), DEFAULT_BG)
            canvas.paste(image, (0, 0))
            image = canvas
        # The first picture shows from the video's start.
        ended, shown, shown_key = shown, Frame(image, at if shown is not None else 0.0, at, seq), key
        stats.frames += 1
        if ended is not None:
            ended.end = at
        return ended

    now = 0.0
    for now, event in _timeline(files, speed, max_idle):
        while dirty and slot / fps < now:
            done = sample(slot / fps)
            dirty = False
            slot += 1
            if done is not None:
                yield done
        slot = max(slot, math.ceil(now * fps - 1e-9))
        if screen is None:
            screen = _first_screen(files, backend)
            dirty = True
        if event.type == "output":
            screen.feed(shown_bytes(event))
            dirty = True
        elif event.type == "checkpoint":
            screen.feed(output_bytes(event))
            dirty = True
        elif event.type == "resize" and event.cols and event.rows:
            _check_logged_size(event.cols, event.rows, f"its resize event {event.seq}")
            screen.resize(event.cols, event.rows)
            dirty = True
        seq = event.seq
        stats.events += 1
    if screen is None:  # a log of no events: its empty screen
        screen = _first_screen(files, backend)
        dirty = True
    if dirty:
        done = sample(slot / fps)
        if done is not None:
            yield done
    stats.last_seq = seq
    if shown is not None:
        shown.end = max(shown.start, now) + 1 / fps  # the last picture stays a slot at least
        stats.duration = shown.end
        yield shown


def _first_screen(files: list[Path], backend: str | None) -> Any:
    """A fresh screen of the first readable file's header size, answering no query."""
    import os

    from agent_tty.protocol.errors import AgentTtyError
    from agent_tty.terminal.replay import _check_logged_size, open_log
    from agent_tty.terminal.screen import open_screen

    for index, path in enumerate(files):
        try:
            with open_log(path) as (header, _events):
                _check_logged_size(header.cols, header.rows, "its header")
                return open_screen(header.cols, header.rows, None, backend)
        except AgentTtyError:
            if index < len(files) - 1 and not os.path.lexists(path):
                continue
            raise
    raise AssertionError("log_files names events.jsonl at least")


# --- encoders ---------------------------------------------------------------------------------


def encode(
    files: list[Path], format: str, stats: VideoStats, fps: int = FPS, speed: float = 1.0, max_idle: float = MAX_IDLE  # noqa: A002
) -> Iterator[bytes]:
    """The video file's bytes, a chunk at a time."""
    stats.width, stats.height = _canvas_size(files)
    pictures = frames(files, stats, fps, speed, max_idle)
    if format == "gif":
        yield from _gif(pictures, stats)
    else:
        yield from _av(pictures, stats, format, fps)


def load_av() -> Any:
    """PyAV, or MISSING_DEPENDENCY naming the extra that brings it."""
    try:
        import av
    except ImportError as err:
        import sys

        from agent_tty.protocol.errors import AgentTtyError, ErrorCode

        raise AgentTtyError(
            ErrorCode.MISSING_DEPENDENCY,
            f"webm and mp4 need PyAV (agent-tty's `video` extra): {VIDEO_INSTALL}; gif needs nothing more",
            module="av",
            extra="video",
            install=VIDEO_INSTALL,
            python=sys.executable,
            reason=str(err),
        ) from None
    return av


def _av(pictures: Iterator[Frame], stats: VideoStats, format: str, fps: int) -> Iterator[bytes]:  # noqa: A002
    from fractions import Fraction

    av = load_av()
    container_format, codec = AV_FORMATS[format]
    out = io.BytesIO()
    container = av.open(out, mode="w", format=container_format)
    stream = container.add_stream(codec, rate=fps)
    stream.width, stream.height = stats.width, stats.height
    stream.pix_fmt = "yuv420p"
    stream.codec_context.time_base = Fraction(1, 1000)
    if codec == "libx264":
        stream.options = {"preset": "veryfast", "crf": "20", "tune": "stillimage"}
    else:
        stream.options = {"deadline": "realtime", "cpu-used": "8", "crf": "30", "b": "0", "row-mt": "1"}
    last_pts = -1
    last: Frame | None = None
    for frame in pictures:
        pts = max(last_pts + 1, round(frame.start * 1000))
        picture = av.VideoFrame.from_image(frame.image)
        picture.pts, picture.time_base = pts, Fraction(1, 1000)
        for packet in stream.encode(picture):
            container.mux(packet)
        last_pts, last = pts, frame
        stats.frame_seqs.append(frame.seq)
    if last is not None:  # the last picture again at the video's end, so players hold it that long
        end = max(last_pts + 1, round(last.end * 1000))
        picture = av.VideoFrame.from_image(last.image)
        picture.pts, picture.time_base = end, Fraction(1, 1000)
        for packet in stream.encode(picture):
            container.mux(packet)
    for packet in stream.encode(None):
        container.mux(packet)
    container.close()
    data = out.getbuffer()
    for at in range(0, len(data), CHUNK):
        yield bytes(data[at : at + CHUNK])


def _gif(pictures: Iterator[Frame], stats: VideoStats) -> Iterator[bytes]:
    """GIF89a that loops, each frame only the rectangle that changed since the one before
    (disposal 1: it is drawn over it), with its delay in centiseconds."""
    from PIL import ImageChops

    yield b"GIF89a" + struct.pack("<HHBBB", stats.width, stats.height, 0, 0, 0)
    yield b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"  # loop forever
    previous = None
    for frame in pictures:
        box = (0, 0, stats.width, stats.height)
        if previous is not None:
            box = ImageChops.difference(previous, frame.image).getbbox() or (0, 0, 1, 1)
        region = frame.image.crop(box)
        delay = max(2, round(frame.end * 100) - round(frame.start * 100))
        yield _gif_frame(region, box[0], box[1], delay)
        previous = frame.image
        stats.frame_seqs.append(frame.seq)
    yield b"\x3b"


def _paletted(region: Any) -> Any:
    """The region in 256 colours or fewer. Median cut keeps every colour exactly while a region
    has 256 or fewer (a screen in one or two colours, antialiased: ~230); more are approximated."""
    from PIL import Image

    return region.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)


def _gif_frame(region: Any, left: int, top: int, delay: int) -> bytes:
    """One frame's blocks: Pillow encodes the region as a GIF of its own; its global colour
    table becomes this frame's local one and its image data is kept as it is."""
    encoded = io.BytesIO()
    _paletted(region).save(encoded, format="GIF", interlace=False, optimize=False)
    data = encoded.getvalue()
    flags = data[10]
    at = 13
    table = b""
    if flags & 0x80:
        size = 3 << ((flags & 7) + 1)
        table, bits = data[at : at + size], flags & 7
        at += size
    while data[at] == 0x21:  # extensions Pillow wrote: skipped
        at += 2
        while data[at]:
            at += data[at] + 1
        at += 1
    assert data[at] == 0x2C, "Pillow's GIF has its image descriptor here"
    _x, _y, w, h, local = struct.unpack_from("<HHHHB", data, at + 1)
    at += 10
    if local & 0x80:  # a local table of its own wins
        size = 3 << ((local & 7) + 1)
        table, bits = data[at : at + size], local & 7
        at += size
    start = at
    at += 1  # LZW minimum code size
    while data[at]:
        at += data[at] + 1
    image_data = data[start : at + 1]
    control = b"\x21\xf9\x04" + struct.pack("<BHBB", 1 << 2, delay, 0, 0)
    descriptor = b"\x2c" + struct.pack("<HHHHB", left, top, w, h, 0x80 | bits)
    return control + descriptor + table + image_data


def video_report() -> dict[str, Any]:
    """What `record export` can write here (for doctor): gif with Pillow, a dependency; webm and
    mp4 with PyAV, the `video` extra, looked up without being imported."""
    import importlib.metadata
    import importlib.util

    try:
        found = importlib.util.find_spec("av") is not None
        version = importlib.metadata.version("av") if found else None
    except (ImportError, ValueError, importlib.metadata.PackageNotFoundError):
        found, version = False, None
    return {
        "formats": {"gif": True, "webm": found, "mp4": found},
        "pyav": version,
        "install": None if found else VIDEO_INSTALL,
    }
