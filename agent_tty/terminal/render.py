"""Draw a structured snapshot as a PNG: the cell grid in JetBrains Mono, colours, attributes, cursor."""

from __future__ import annotations

import io
from typing import Any

from agent_tty.terminal.screen import DEFAULT_BG, DEFAULT_FG

FONT_SIZE = 16
PADDING = 8
# xterm's default 16 colours.
ANSI = [
    (0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205), (229, 229, 229),
    (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255), (255, 0, 255), (0, 255, 255), (255, 255, 255),
]


def palette(index: int) -> tuple[int, int, int]:
    if index < 16:
        return ANSI[index]
    if index < 232:
        index -= 16
        steps = (0, 95, 135, 175, 215, 255)
        return steps[index // 36], steps[(index // 6) % 6], steps[index % 6]
    level = 8 + (index - 232) * 10
    return level, level, level


def color(value: int | str | None, default: tuple[int, int, int]) -> tuple[int, int, int]:
    if value is None:
        return default
    if isinstance(value, int):
        return palette(value)
    return int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16)


def _fonts() -> dict[str, Any]:
    from PIL import ImageFont

    import fontpkg_jetbrains_mono

    files = fontpkg_jetbrains_mono.ROOT / "files"
    fonts: dict[str, Any] = {}
    for style, name, variation in (
        ("regular", "JetBrainsMono[wght].ttf", "Regular"),
        ("bold", "JetBrainsMono[wght].ttf", "Bold"),
        ("italic", "JetBrainsMono-Italic[wght].ttf", "Italic"),
        ("bolditalic", "JetBrainsMono-Italic[wght].ttf", "Bold Italic"),
    ):
        font = ImageFont.truetype(str(files / name), FONT_SIZE)
        try:
            font.set_variation_by_name(variation)
        except (OSError, ValueError, AttributeError):
            pass  # a FreeType without variations draws the default weight
        fonts[style] = font
    return fonts


def render_png(snapshot: dict[str, Any]) -> tuple[bytes, int, int]:
    from PIL import Image, ImageDraw

    fonts = _fonts()
    regular = fonts["regular"]
    ascent, descent = regular.getmetrics()
    cell_w = round(regular.getlength("M"))
    cell_h = ascent + descent + 2
    cols, rows = snapshot["cols"], snapshot["rows"]
    width, height = cols * cell_w + 2 * PADDING, rows * cell_h + 2 * PADDING
    image = Image.new("RGB", (width, height), DEFAULT_BG)
    draw = ImageDraw.Draw(image)
    cursor = snapshot["cursor"]
    for y, row in enumerate(snapshot["cells"]):
        for x, cell in enumerate(row):
            fg = color(cell["fg"], DEFAULT_FG)
            bg = color(cell["bg"], DEFAULT_BG)
            if cell["inverse"]:
                fg, bg = bg, fg
            if cursor["visible"] and (x, y) == (cursor["x"], cursor["y"]):
                fg, bg = bg, DEFAULT_FG  # a block cursor
            if cell["faint"]:
                fg = tuple((c + b) // 2 for c, b in zip(fg, bg))  # type: ignore[assignment]
            left, top = PADDING + x * cell_w, PADDING + y * cell_h
            if bg != DEFAULT_BG:
                draw.rectangle([left, top, left + cell_w - 1, top + cell_h - 1], fill=bg)
            char = cell["char"]
            if char and char != " ":
                style = ("bold" if cell["bold"] else "") + ("italic" if cell["italic"] else "")
                draw.text((left, top + 1), char, font=fonts[style or "regular"], fill=fg)
            if cell["underline"]:
                draw.line([left, top + ascent + 2, left + cell_w - 1, top + ascent + 2], fill=fg)
            if cell["strikethrough"]:
                draw.line([left, top + cell_h // 2, left + cell_w - 1, top + cell_h // 2], fill=fg)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue(), width, height
