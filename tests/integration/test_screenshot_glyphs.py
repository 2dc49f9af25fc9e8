"""`agent-tty screenshot` of a test runner's marks and a rich-style panel: real glyphs, joined lines."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BACKENDS, Cli

pytestmark = pytest.mark.integration
PADDING = 8  # agent_tty.terminal.render.PADDING
COLS, ROWS = 20, 6
# ✓ and ✗ as vitest prints them, U+E0A3 (a Powerline symbol no installed font has: the missing
# box), a rounded panel as rich draws it, and CJK text.
SCREEN = "✓ ok ✗ no \ue0a3\n╭────╮\n│ ok │\n╰────╯\n中文 end"


@pytest.mark.parametrize("backend", BACKENDS)
def test_screenshot_draws_marks_and_joined_box_lines(cli: Cli, backend: str, tmp_path: Path) -> None:
    from PIL import Image

    script = "printf '\\e[?25l'; printf '%s\\n' \"$SCREEN\"; sleep 60"
    options = ("--cols", str(COLS), "--rows", str(ROWS), "--env", f"SCREEN={SCREEN}", "--env", "LANG=C.UTF-8")
    sid = cli.run("create", *options, "--", "bash", "--norc", "-c", script, env={"AGENT_TTY_SCREEN": backend}).result["sessionId"]
    assert cli.run("wait", sid, "--text", "end", "--timeout", "20s").result["matched"] is True
    cli.run("wait", sid, "--screen-stable-ms", "300", "--timeout", "10s")
    shot = cli.run("screenshot", sid, "--out", str(tmp_path / "glyphs.png")).result
    with Image.open(shot["path"]) as png:
        image = png.convert("RGB")
    assert image.size == (shot["width"], shot["height"])
    cell_w, cell_h = (image.width - 2 * PADDING) // COLS, (image.height - 2 * PADDING) // ROWS
    background = image.getpixel((0, 0))

    def box(x: int, y: int) -> tuple[int, int, int, int]:
        return PADDING + x * cell_w, PADDING + y * cell_h, PADDING + (x + 1) * cell_w, PADDING + (y + 1) * cell_h

    def drawn(x: int, y: int) -> Any:
        """A digest of what the cell shows, None when it is empty (the background is black)."""
        cell = image.crop(box(x, y))
        return hashlib.sha256(cell.tobytes()).hexdigest() if cell.getbbox() else None

    def lit(px: int, py: int) -> bool:
        return image.getpixel((px, py)) != background

    check, cross, missing = drawn(0, 0), drawn(5, 0), drawn(10, 0)
    assert missing is not None, "a character no font has is drawn as the box"
    assert check is not None and check != missing, "✓ comes from a font that has it"
    assert cross is not None and cross not in (missing, check), "✗ too, and differs from ✓"

    # │ at column 0 of rows 1-3 (under ╭, beside "ok", above ╰): lit from the middle of row 1 to
    # the middle of row 3 in one pixel column, across both row boundaries.
    top, bottom = box(0, 1)[1] + cell_h // 2 + cell_h // 4, box(0, 3)[1] + cell_h // 4
    columns = [px for px in range(box(0, 1)[0], box(0, 1)[2]) if all(lit(px, py) for py in range(top, bottom))]
    assert columns, "the panel's left edge has no gap between rows"
    # ─ from column 1 to 4 of row 1: lit along one pixel row across the cell borders.
    left, right = box(1, 1)[0], box(4, 1)[2]
    rows = [py for py in range(box(1, 1)[1], box(1, 1)[3]) if all(lit(px, py) for px in range(left, right))]
    assert rows, "the panel's top edge has no gap between cells"

    if importlib.util.find_spec("noto_cjk_sans_jp_regular") is not None:
        assert drawn(0, 4) not in (None, missing) and drawn(1, 4) is not None, "中 is drawn across its two cells"
