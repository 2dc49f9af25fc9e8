"""Results of the commands that observe a session: wait, snapshot, screenshot, record export."""

from __future__ import annotations

from typing import Literal

from agent_tty.schema.base import Model, SessionResult, absent, doc


class WaitResult(SessionResult):
    """`matched` or `timedOut` (exit 11); a session that ended first is SESSION_NOT_RUNNING."""

    matched: bool = doc("Whether the condition held.")
    timedOut: bool = doc("Whether --timeout passed first (exit 11; the envelope still says ok).")
    seq: int = doc("The last event seq when the wait ended.")
    screenHash: str = absent(
        "sha256 of the visible text the wait was judged on, as snapshot's (absent when an ended session's "
        "--exit, --screen-stable-ms, --idle-ms or --output wait was judged from its log without its screen)."
    )
    ended: bool = absent("Present (true) when an ended session was judged from its event log.")
    exitCode: int | None = absent("The program's exit code, when the wait saw it end (absent otherwise).")
    exitSignal: int | None = absent("The signal that ended the program, when the wait saw it end (absent otherwise).")
    output: str = absent(
        "--output: what the program printed after input N's line (its echo left out) until the wait ended, as text "
        "(the last 64 KiB; absent without --output)."
    )
    outputTruncated: bool = absent("--output: whether more was printed than `output` holds.")


class Cursor(Model):
    x: int = doc("Column, from 0.")
    y: int = doc("Row, from 0.")
    visible: bool = doc("Whether the cursor is shown.")


class Cell(Model):
    char: str = doc("The cell's text (empty for the second cell of a wide character).")
    fg: int | str | None = doc("Foreground: a palette index, `#rrggbb`, or null for the default.")
    bg: int | str | None = doc("Background: a palette index, `#rrggbb`, or null for the default.")
    bold: bool = doc("Bold.")
    italic: bool = doc("Italic.")
    underline: bool = doc("Underlined.")
    inverse: bool = doc("Inverse video.")
    faint: bool = doc("Faint (always false on the pyte backend).")
    strikethrough: bool = doc("Struck through.")


class StyleRun(Model):
    """Adjacent cells of one row in one style that is not the default; only the attributes that
    differ from the default are present."""

    row: int = doc("Row, from 0.")
    col: int = doc("First column, from 0.")
    len: int = doc("How many cells (a wide character takes two).")
    text: str = doc("The run's text.")
    fg: int | str = absent("Foreground: a palette index or `#rrggbb` (absent: the default).")
    bg: int | str = absent("Background: a palette index or `#rrggbb` (absent: the default).")
    bold: bool = absent("Bold (present only when true).")
    italic: bool = absent("Italic (present only when true).")
    underline: bool = absent("Underlined (present only when true).")
    inverse: bool = absent("Inverse video (present only when true).")
    faint: bool = absent("Faint (present only when true).")
    strikethrough: bool = absent("Struck through (present only when true).")


class SnapshotResult(SessionResult):
    """The text form; `--format structured` adds `cells`, `--scrollback` adds `scrollback`."""

    cols: int = doc("Screen width.")
    rows: int = doc("Screen height.")
    lines: list[str] = doc("The visible rows, trailing spaces removed.")
    text: str = doc("The visible rows joined by newlines, trailing empty rows removed.")
    cursor: Cursor = doc("The cursor.")
    alternateScreen: bool = doc("Whether the program switched to the alternate screen (a full-screen app).")
    title: str = doc("The window title the program set.")
    screenHash: str = doc("sha256 of the visible text.")
    seq: int = doc("The last event seq the screen includes.")
    backend: Literal["ghostty", "pyte"] = doc("The screen engine.")
    source: Literal["live", "replay"] = doc("live: the host's screen; replay: rebuilt from an ended session's log.")
    scrollback: list[str] = absent("--scrollback: the rows that scrolled off the top, oldest first (absent otherwise).")
    cells: list[list[Cell]] = absent("--format structured: rows of cells with colours and attributes (absent otherwise).")
    styles: list[StyleRun] = absent("MCP `snapshot` with `styles`: the runs not in the default style, far smaller than cells (absent otherwise).")


class ScreenshotResult(SessionResult):
    path: str = doc("The PNG, in the session's artifacts.")
    sha256: str = doc("sha256 of the PNG.")
    bytes: int = doc("The PNG's size.")
    copiedTo: str | None = doc("Where --out copied it, else null.")
    width: int = doc("Image width in pixels.")
    height: int = doc("Image height in pixels.")
    seq: int = doc("The last event seq the screen includes.")
    screenHash: str = doc("sha256 of the visible text.")
    source: Literal["live", "replay"] = doc("live: the host's screen; replay: rebuilt from the log.")


class RecordResult(SessionResult):
    format: Literal["asciicast", "webm", "mp4", "gif"] = doc("The file's format: asciicast (asciinema v2), or a video: webm, mp4, gif.")
    path: str = doc("The file written (--out, else the session's artifacts).")
    sha256: str = doc("sha256 of the file.")
    bytes: int = doc("The file's size.")
    events: int = doc("Events written to the file (a video: events read from the log).")
    duration: float = doc("Seconds from the first to the last event (a video: seconds of video, pauses capped and sped up).")
    frames: int = absent("Video: distinct pictures drawn, each held until the screen changed (absent for asciicast).")
    width: int = absent("Video: width in pixels (absent for asciicast).")
    height: int = absent("Video: height in pixels (absent for asciicast).")
    fps: int = absent("Video: the frames a second the timeline is sampled at (absent for asciicast).")
    speed: float = absent("Video: how many times as fast as the session it plays (absent for asciicast).")
    maxIdle: float = absent("Video: the longest pause kept, in seconds; 0: none capped (absent for asciicast).")
    lastSeq: int = absent("Video: the seq of the last event the video shows (absent for asciicast).")


class DashboardResult(Model):
    """`dashboard --once`: the frame it printed; the live dashboard (with --json): its last frame, after q."""

    cols: int = doc("The frame's width in cells.")
    rows: int = doc("The frame's height: the number of `lines`.")
    lines: list[str] = doc("The frame as text, a row each, right-trimmed (what the terminal shows, without reverse video).")
    sessions: list[str] = doc("The ids the list shows, in its order (oldest first; its own session left out).")
    selected: str | None = doc("The id of the mirrored session, or null when the list is empty.")
    seq: int = doc("The last event seq of the selected session's log the mirror has drawn (0: none).")
    paused: bool = doc("Whether the mirror was paused (space).")
