"""agent-tty record export ID --format asciicast|webm|mp4|gif [--out PATH] [--speed N] [--max-idle S] [--fps N]."""

from __future__ import annotations

from agent_tty.cli.output import emit

TYPE_CHECKING = False
if TYPE_CHECKING:  # the declarations are read by agent_tty/cli/parse.py, off the hot path
    from typing import Annotated

    import typer


def command(
    action: Annotated[str, typer.Argument(metavar="export", help="The only action: export.")],
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    format_: Annotated[str, typer.Option("--format", help="asciicast (asciinema v2), or a video: webm, mp4, gif.")] = "asciicast",
    out: Annotated[str | None, typer.Option("--out", help="Where to write it (default: the session's artifacts).")] = None,
    speed: Annotated[str | None, typer.Option("--speed", metavar="N", help="Video: play N times as fast (default 1).")] = None,
    max_idle: Annotated[
        str | None, typer.Option("--max-idle", metavar="SECONDS", help="Video: cap each pause (default 2s; 0: no cap).")
    ] = None,
    fps: Annotated[int | None, typer.Option("--fps", help="Video: frames a second at most (default 10).")] = None,
) -> int:
    from agent_tty.cli.engine import cli_engine
    from agent_tty.ops.artifacts import check_video_options, export
    from agent_tty.protocol.errors import invalid

    if action != "export":
        raise invalid(f"unknown record action {action!r}: use `record export`", value=action)
    from agent_tty.protocol.values import parse_duration

    rate = None
    if speed is not None:
        try:
            rate = float(speed)
        except ValueError:
            raise invalid(f"invalid --speed {speed!r}: a number from 0.01 to 1000 (2: twice as fast)", value=speed) from None
    idle = None if max_idle is None else parse_duration(max_idle, "--max-idle")
    check_video_options(format_, rate, idle, fps)  # before the Home is looked at, as before
    result = export(cli_engine(), session_id, format_, out, speed=rate, max_idle=idle, fps=fps)
    emit(result, result["path"])
    return 0
