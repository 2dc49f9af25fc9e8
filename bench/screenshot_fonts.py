"""Screenshots of the glyph cases in docs/screenshots/, made through the real CLI; and render timing.

    .venv/bin/python bench/screenshot_fonts.py shots --label after [--out docs/screenshots]
    git show 309fae9:agent_tty/terminal/render.py > /tmp/render_old.py
    .venv/bin/python bench/screenshot_fonts.py shots --label before --render /tmp/render_old.py
    .venv/bin/python bench/screenshot_fonts.py timing [--old /tmp/render_old.py] [--tries 25] [--command]

`shots` starts one session per case (a rich panel and table, a test runner's summary, CJK text,
a Powerline prompt), waits until its screen is still, runs `agent-tty screenshot --out` and saves
`<case>-<label>.png`, re-encoded losslessly with optimize=True. `--render` runs the screenshot
command with another render.py in place of agent_tty/terminal/render.py: the "before" pictures
are the one from before font fallback (commit 309fae9).

`timing` renders an 80x24 and a 200x50 screen of plain ASCII in-process, alternating the current
renderer and, with --old, another render.py loaded from a file, and prints the medians of the
warm renders and of first renders in fresh processes; with --command it times whole
`agent-tty screenshot` processes instead.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

RICH = textwrap.dedent(
    """
    from rich import box
    from rich.console import Console
    from rich.panel import Panel
    from rich.progress_bar import ProgressBar
    from rich.table import Table
    c = Console()
    t = Table(title="deploys")
    t.add_column("service")
    t.add_column("status")
    t.add_column("time", justify="right")
    t.add_row("api", "[green]ok[/]", "1.2s")
    t.add_row("worker", "[red]failed[/]", "0.4s")
    c.print(Panel(t, title="rich Panel", subtitle="box.ROUNDED", width=44))
    c.print(Panel("double ═ ║ and heavy ━ ┃", box=box.DOUBLE, width=44))
    c.print(ProgressBar(total=100, completed=62, width=30), "62%  ▁▂▃▄▅▆▇█ ░▒▓")
    """
)

NODE_TEST = textwrap.dedent(
    """
    import test from "node:test";
    Error.stackTraceLimit = 0;
    test("adds numbers", () => {});
    test("parses the config", () => {});
    test("subtracts numbers", () => { throw new Error("expected 3, got 1"); });
    """
)

# vitest/jest print ✓ and ✗ (U+2713, U+2717), node's runner ✔ and ✖; spinners are braille.
RUNNER_TAIL = (
    r"printf '\n \e[32m✓\e[0m src/add.test.ts (3 tests) 2ms\n \e[31m✗\e[0m src/sub.test.ts > subtracts\n"
    r" \e[33m★\e[0m 1 snapshot written   \e[36m➜\e[0m  re-run with --watch   \e[36m⠋ ⠙ ⠹ ⠸\e[0m\n"
    r" Tests  \e[1;31m1 failed\e[0m | \e[1;32m3 passed\e[0m (4)  ✘ ✔'"
)

CJK = (
    r"printf 'ls: 文件.txt  日本語.md  한국어.csv\n"
    r"│名前  │値   │\n│中文  │12345│\n│ASCII │ok   │\n"
    r"wide: ｆｕｌｌｗｉｄｔｈ　ＡＢＣ  emoji: 🎉 🚀 ✅ 🔥 👍\n'"
)

# Powerline separators (U+E0B0-E0B3), the branch and lock symbols (U+E0A0, E0A2), the rounded
# caps many prompts use (U+E0B4, E0B6), a Nerd Font icon (U+F113, still a box) and ❯.
POWERLINE = (
    r"printf '\e[30;44m ~/src/agent-tty \e[34;42m\ue0b0\e[30m \ue0a0 main \e[32;43m\ue0b0\e[30m \ue0a2 ro "
    r"\e[33;49m\ue0b0\e[0m\n\e[36m\ue0b6\e[30;46m 12:04 \e[36;49m\ue0b4\e[0m \ue0b1 left \ue0b3 right "
    r"\uf113 git\n\e[35m❯\e[0m \e[32m➜\e[0m \e[1;32m✔\e[0m \e[1;31m✘\e[0m $ '"
)


def cases() -> dict[str, tuple[int, int, str, str]]:
    """name -> (cols, rows, bash script, text to wait for)."""
    return {
        "rich-panel": (48, 14, f"{PYTHON} -c '{RICH}'", "62%"),
        "test-runner": (60, 25, f"node --test --test-reporter=spec \"$T\"; {RUNNER_TAIL}", "passed (4)"),
        "cjk": (60, 6, CJK, "emoji"),
        "powerline": (52, 5, POWERLINE, "✘"),
    }


# The real CLI with agent_tty.terminal.render replaced by the module in the file argv[1].
WITH_RENDER = (
    "import importlib.util, sys; spec = importlib.util.spec_from_file_location('agent_tty.terminal.render', sys.argv.pop(1)); "
    "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
    "sys.modules['agent_tty.terminal.render'] = module; from agent_tty.cli.main import main; sys.exit(main())"
)


def cli(home: Path, *args: str, render: Path | None = None) -> dict:
    entry = ["-c", WITH_RENDER, str(render)] if render is not None else ["-m", "agent_tty"]
    done = subprocess.run([PYTHON, *entry, "--home", str(home), "--json", *args], capture_output=True, text=True, cwd=ROOT)
    envelope = json.loads(done.stdout) if done.stdout.strip() else {}
    if done.returncode != 0:
        raise SystemExit(f"agent-tty {' '.join(args)} failed ({done.returncode}): {done.stdout}{done.stderr}")
    return envelope.get("result", envelope)


def shrink(png: Path) -> None:
    """Re-encode a screenshot smaller without changing a pixel: a palette PNG when it has at most
    256 colours, else an optimised RGB one."""
    from PIL import Image

    with Image.open(png) as image:
        rgb = image.convert("RGB")
    if rgb.getcolors(256) is not None:
        rgb = rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=256)
    rgb.save(png, format="PNG", optimize=True)


def shots(label: str, out: Path, only: list[str], render: Path | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="shots-home-"))
    os.chmod(home, 0o700)
    work = Path(tempfile.mkdtemp(prefix="shots-work-"))
    test_file = work / "math.test.mjs"
    test_file.write_text(NODE_TEST)
    try:
        for name, (cols, rows, script, marker) in cases().items():
            if only and name not in only:
                continue
            program = f"printf '\\e[?25l'; {script}; sleep 120"
            created = cli(
                home, "create", "--cols", str(cols), "--rows", str(rows), "--cwd", str(work),
                "--env", f"T={test_file}", "--env", "TERM=xterm-256color", "--env", "COLORTERM=truecolor",
                "--", "bash", "--norc", "-c", program,
            )
            sid = created["sessionId"]
            try:
                cli(home, "wait", sid, "--text", marker, "--timeout", "30s")
                cli(home, "wait", sid, "--screen-stable-ms", "400", "--timeout", "10s")
                target = out / f"{name}-{label}.png"
                cli(home, "screenshot", sid, "--out", str(target), render=render)
                shrink(target)
                print(f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: {target.stat().st_size} bytes")
            finally:
                cli(home, "destroy", sid)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def plain_snapshot(cols: int, rows: int) -> dict:
    from agent_tty.terminal.screen import open_screen, snapshot

    screen = open_screen(cols, rows, backend="pyte")
    text = "The quick brown fox jumps over the lazy dog 0123456789 ~!@#$%^&*()_+{}|:<>? "
    lines = [(text * 4)[i % 17 : i % 17 + cols - 1] for i in range(rows)]
    screen.feed("\r\n".join(lines).encode())
    return snapshot(screen, 1, structured=True)


def load_renderer(path: Path | None):  # type: ignore[no-untyped-def]
    if path is None:
        from agent_tty.terminal import render

        return render.render_png
    spec = importlib.util.spec_from_file_location("render_old", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.render_png


def first_render(path: Path | None, cols: int, rows: int) -> float:
    """Milliseconds of the first render in this process (fonts, glyphs, masks made anew), as
    `agent-tty screenshot` pays it; the imports are done before the clock starts."""
    import PIL.Image, PIL.ImageDraw, PIL.ImageFont  # noqa: E401, F401

    fn = load_renderer(path)
    snap = plain_snapshot(cols, rows)
    start = time.perf_counter()
    fn(snap)
    return (time.perf_counter() - start) * 1000


def timing(old: Path | None, tries: int) -> None:
    paths: dict[str, Path | None] = {"current": None}
    if old is not None:
        paths["old"] = old
    for cols, rows in ((80, 24), (200, 50)):
        snap = plain_snapshot(cols, rows)
        renderers = {name: load_renderer(path) for name, path in paths.items()}
        warm: dict[str, list[float]] = {name: [] for name in paths}
        cold: dict[str, list[float]] = {name: [] for name in paths}
        for fn in renderers.values():
            fn(snap)  # warm: fonts, imports, glyph masks
        for _ in range(tries):
            for name, fn in renderers.items():
                start = time.perf_counter()
                fn(snap)
                warm[name].append((time.perf_counter() - start) * 1000)
        for _ in range(max(5, tries // 4)):
            for name, path in paths.items():
                code = (
                    "import sys; sys.path.insert(0, sys.argv[1]); import screenshot_fonts as s; from pathlib import Path; "
                    "print(s.first_render(Path(sys.argv[2]) if sys.argv[2] else None, int(sys.argv[3]), int(sys.argv[4])))"
                )
                argv = [PYTHON, "-c", code, str(Path(__file__).parent), str(path or ""), str(cols), str(rows)]
                cold[name].append(float(subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT).stdout))
        for kind, samples in (("in-process, warm", warm), ("first render of a process", cold)):
            line = f"{cols}x{rows} {kind}:"
            for name, values in samples.items():
                line += f"  {name} median {statistics.median(values):6.1f} ms (n={len(values)})"
            print(line)


def command_timing(old: Path, tries: int) -> None:
    """Wall-clock ms of whole `agent-tty screenshot` processes of a screen of plain text, the
    current render.py against `old`, alternating, both started the same way (WITH_RENDER)."""
    current = ROOT / "agent_tty" / "terminal" / "render.py"
    home = Path(tempfile.mkdtemp(prefix="shots-home-"))
    os.chmod(home, 0o700)
    try:
        # Not 200x50: its structured snapshot (~1.5 MB of JSON) is over rpc.MAX_MESSAGE (1 MiB),
        # and `screenshot` of it fails with PROTOCOL_ERROR, whichever renderer.
        for cols, rows in ((80, 24), (120, 40)):
            line = "The quick brown fox jumps over the lazy dog 0123456789 " * 4
            script = f"for i in $(seq {rows}); do printf '%s\\n' \"${{L:0:{cols - 1}}}\"; done; sleep 120"
            sid = cli(home, "create", "--cols", str(cols), "--rows", str(rows), "--env", f"L={line}", "--", "bash", "--norc", "-c", script)["sessionId"]
            try:
                cli(home, "wait", sid, "--screen-stable-ms", "300", "--timeout", "10s")
                samples: dict[str, list[float]] = {"current": [], "old": []}
                for _ in range(tries):
                    for name, path in (("current", current), ("old", old)):
                        start = time.perf_counter()
                        cli(home, "screenshot", sid, render=path)
                        samples[name].append((time.perf_counter() - start) * 1000)
                line_out = f"{cols}x{rows} whole screenshot command:"
                for name, values in samples.items():
                    line_out += f"  {name} median {statistics.median(values):6.1f} ms (n={len(values)})"
                print(line_out)
            finally:
                cli(home, "destroy", sid)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p_shots = sub.add_parser("shots")
    p_shots.add_argument("--label", required=True)
    p_shots.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    p_shots.add_argument("--only", nargs="*", default=[])
    p_shots.add_argument("--render", type=Path, help="screenshot with this render.py instead (the old one, for 'before')")
    p_timing = sub.add_parser("timing")
    p_timing.add_argument("--old", type=Path)
    p_timing.add_argument("--tries", type=int, default=25)
    p_timing.add_argument("--command", action="store_true", help="time whole screenshot commands (needs --old)")
    args = parser.parse_args()
    if args.command == "shots":
        shots(args.label, args.out, args.only, args.render)
    elif args.command:
        command_timing(args.old, args.tries)
    else:
        timing(args.old, args.tries)


if __name__ == "__main__":
    main()
