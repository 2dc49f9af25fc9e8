"""Draw a structured snapshot as a PNG: the cell grid in JetBrains Mono, colours, attributes, cursor.

Each distinct glyph (character, style, width in cells) is drawn once into an 8-bit mask and then
stamped into every cell that shows it in that cell's colour: FreeType drawing each cell anew
cost ~0.4 ms a cell. Box drawing, block elements, braille and Powerline separators are shapes
made to fill the cell (boxdraw), so lines join across cells and rows; characters JetBrains Mono
lacks come from fallback fonts (glyphs); a wide character (CJK, emoji) spans its two cells.
"""

from __future__ import annotations

import functools
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

    from agent_tty import fonts as shipped

    fonts: dict[str, Any] = {}
    for style, name, variation in (
        ("regular", shipped.PRIMARY, "Regular"),
        ("bold", shipped.PRIMARY, "Bold"),
        ("italic", shipped.PRIMARY_ITALIC, "Italic"),
        ("bolditalic", shipped.PRIMARY_ITALIC, "Bold Italic"),
    ):
        font = ImageFont.truetype(str(shipped.path(name)), FONT_SIZE)
        try:
            font.set_variation_by_name(variation)
        except (OSError, ValueError, AttributeError):
            pass  # a FreeType without variations draws the default weight
        fonts[style] = font
    return fonts


Mask = tuple[Any, int, int]  # an "L" image, and where it goes relative to the cell's top left


class Cells:
    """The cell size of the font, and the mask of every glyph drawn so far (for this process)."""

    def __init__(self) -> None:
        self.fonts = _fonts()
        regular = self.fonts["regular"]
        self.ascent, descent = regular.getmetrics()
        self.width = round(regular.getlength("M"))
        self.height = self.ascent + descent + 2
        self.pad = self.width // 2  # room for an italic overhang or a wide glyph's edge
        self._masks: dict[tuple[str, str, int], Mask | None] = {}
        self._glyphs: Any = None

    def mask(self, char: str, style: str, cells: int = 1) -> Mask | None:
        """The mask of `char` in `style` ("", "bold", "italic", "bolditalic") spanning `cells`
        cells, or None when it draws nothing."""
        key = (char, style, cells)
        try:
            return self._masks[key]
        except KeyError:
            made = self._masks[key] = self._make(char, style, cells)
            return made

    @property
    def glyphs(self) -> Any:
        """The fallback decisions (glyphs.Glyphs), read only once a character is not ASCII."""
        if self._glyphs is None:
            from agent_tty import fonts
            from agent_tty.terminal.glyphs import Glyphs, read_coverage

            primary = read_coverage(fonts.path(fonts.PRIMARY))
            self._glyphs = Glyphs(primary, FONT_SIZE, self.width, self.height, self.ascent)
        return self._glyphs

    def _make(self, char: str, style: str, cells: int) -> Mask | None:
        from PIL import Image, ImageDraw

        plan = None if char < "\x80" else self.glyphs.plan(char, cells)  # ASCII: JetBrains Mono
        kind = "primary" if plan is None else plan.kind
        if kind == "skip":
            return None
        if kind == "shape":
            from agent_tty.terminal import boxdraw

            return boxdraw.mask(char, self.width, self.height), 0, 0
        pad = self.pad
        image = Image.new("L", (cells * self.width + 2 * pad, self.height + 2 * pad), 0)
        draw = ImageDraw.Draw(image)
        if plan is not None and kind == "font":
            draw.text((pad + plan.dx, pad + plan.dy), char, font=plan.font, fill=255, anchor="ls")
        else:  # JetBrains Mono, or its box for a character no font has (centred across its cells)
            shift = (cells - 1) * self.width // 2 if kind == "missing" else 0
            draw.text((pad + shift, pad + 1), char, font=self.fonts[style or "regular"], fill=255)
        ink = image.getbbox()
        if ink is None:
            return None
        return image.crop(ink), ink[0] - pad, ink[1] - pad


@functools.cache
def cells() -> Cells:
    return Cells()


def render_png(snapshot: dict[str, Any]) -> tuple[bytes, int, int]:
    image = render_image(snapshot)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue(), image.width, image.height


def render_image(snapshot: dict[str, Any]) -> Any:
    """The screen as an RGB PIL image: what `screenshot` saves and every video frame shows."""
    from PIL import Image, ImageDraw

    from agent_tty.protocol.errors import AgentTtyError, ErrorCode
    from agent_tty.protocol.values import size_problem

    cols, rows = snapshot["cols"], snapshot["rows"]
    problem = size_problem(cols, rows)  # a host of an older version allowed up to 10000x10000
    if problem is not None:
        raise AgentTtyError(ErrorCode.EXPORT_FAILED, f"cannot draw a screen of {cols}x{rows}: {problem}", cols=cols, rows=rows)
    grid = cells()
    cell_w, cell_h, ascent = grid.width, grid.height, grid.ascent
    width, height = cols * cell_w + 2 * PADDING, rows * cell_h + 2 * PADDING
    image = Image.new("RGB", (width, height), DEFAULT_BG)
    draw = ImageDraw.Draw(image)
    cursor = snapshot["cursor"]
    wide: list[tuple[Mask, int, int, tuple[int, int, int]]] = []
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
                # A wide character's second cell is "": it is drawn across both, after the
                # second cell's background.
                span = 2 if char >= "\x80" and x + 1 < len(row) and row[x + 1]["char"] == "" else 1
                found = grid.mask(char, style, span)
                if found is not None:
                    if span == 2:
                        wide.append((found, left, top, fg))
                    else:
                        mask, dx, dy = found
                        draw.bitmap((left + dx, top + dy), mask, fill=fg)
            if cell["underline"]:
                draw.line([left, top + ascent + 2, left + cell_w - 1, top + ascent + 2], fill=fg)
            if cell["strikethrough"]:
                draw.line([left, top + cell_h // 2, left + cell_w - 1, top + cell_h // 2], fill=fg)
    for (mask, dx, dy), left, top, fg in wide:
        draw.bitmap((left + dx, top + dy), mask, fill=fg)
    return image
