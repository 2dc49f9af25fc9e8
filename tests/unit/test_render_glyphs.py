"""Screenshots draw every glyph: fallback fonts, box drawing that joins, wide characters, and ASCII as before."""

from __future__ import annotations

import functools
import hashlib
import io
import struct
import unicodedata
from typing import Any

import pytest

from agent_tty.terminal import glyphs, render
from agent_tty.terminal.screen import DEFAULT_BG, DEFAULT_FG

NOTDEF = "\U000f0000"  # plane-15 private use: no font has it, so it draws JetBrains Mono's box


def cell(char: str, **attrs: Any) -> dict[str, Any]:
    base = {"char": char, "fg": None, "bg": None, "bold": False, "italic": False, "underline": False,
            "inverse": False, "faint": False, "strikethrough": False}
    return {**base, **attrs}


def snapshot(*lines: str, cols: int | None = None, **attrs: Any) -> dict[str, Any]:
    """A structured snapshot of these lines; a wide character's second cell is "", as the
    screen backends give it."""
    cols = cols or max(sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line) for line in lines)
    grid = []
    for line in lines:
        row = []
        for char in line:
            row.append(cell(char, **attrs))
            if unicodedata.east_asian_width(char) in ("W", "F"):
                row.append(cell("", **attrs))
        grid.append(row + [cell(" ") for _ in range(cols - len(row))])
    return {"cols": cols, "rows": len(lines), "cells": grid, "cursor": {"x": 0, "y": 0, "visible": False}}


def draw(*lines: str, **attrs: Any) -> Any:
    from PIL import Image

    png, _, _ = render.render_png(snapshot(*lines, **attrs))
    return Image.open(io.BytesIO(png)).convert("RGB")


@functools.cache
def cell_size() -> tuple[int, int]:
    """The cell's width and height, from the size of a one-cell screenshot."""
    _, width, height = render.render_png(snapshot(" "))
    return width - 2 * render.PADDING, height - 2 * render.PADDING


def box(x: int, y: int, cells: int = 1) -> tuple[int, int, int, int]:
    width, height = cell_size()
    left, top = render.PADDING + x * width, render.PADDING + y * height
    return left, top, left + cells * width, top + height


def lit(image: Any, x: int, y: int) -> bool:
    return image.getpixel((x, y)) != DEFAULT_BG


def ink(image: Any, x: int, y: int, cells: int = 1) -> str:
    """A digest of the cell's pixels, to compare two cells' drawings."""
    return hashlib.sha256(image.crop(box(x, y, cells)).tobytes()).hexdigest()[:12]


def test_a_check_mark_is_a_glyph_not_the_missing_box() -> None:
    image = draw(f"✓✗✔✘★➜{NOTDEF}")
    missing = ink(image, 6, 0)
    assert image.crop(box(6, 0)).getbbox() is not None, "the missing-glyph box is drawn"
    for x, char in enumerate("✓✗✔✘★➜"):
        assert image.crop(box(x, 0)).getbbox() is not None, f"{char} draws something"
        assert ink(image, x, 0) != missing, f"{char} is drawn from a font that has it, not as a box"
    assert ink(image, 0, 0) != ink(image, 1, 0), "✓ and ✗ differ"


def test_a_horizontal_line_runs_unbroken_across_cells() -> None:
    image = draw("─────", "━━━━━", "═════")
    for y in range(3):
        left, top, right, bottom = box(0, y, 5)
        rows = [py for py in range(top, bottom) if all(lit(image, px, py) for px in range(left, right))]
        assert rows, f"row {y}: some pixel row is lit across all five cells"
    light = [py for py in range(*box(0, 0)[1::2]) if lit(image, box(0, 0)[0], py)]
    heavy = [py for py in range(*box(0, 1)[1::2]) if lit(image, box(0, 1)[0], py)]
    assert len(heavy) > len(light), "heavy is thicker than light"


def test_a_vertical_line_runs_unbroken_across_rows() -> None:
    image = draw("│┃║", "│┃║", "│┃║", "│┃║")
    for x in range(3):
        left, top, right, _ = box(x, 0)
        bottom = box(x, 3)[3]
        columns = [px for px in range(left, right) if all(lit(image, px, py) for py in range(top, bottom))]
        assert columns, f"column {x}: lit from the first row's top to the last row's bottom"


def test_a_rounded_panel_is_closed() -> None:
    """rich's default Panel: the corners meet the edges, so the border is one closed loop."""
    from PIL import ImageDraw

    image = draw("╭──╮", "│  │", "╰──╯")
    inside = box(1, 1)
    centre = ((inside[0] + inside[2]) // 2, (inside[1] + inside[3]) // 2)
    ImageDraw.floodfill(image, centre, (255, 0, 0))
    left, top, _, _ = box(0, 0)
    _, _, right, bottom = box(3, 2)
    assert image.getpixel((left, top)) == DEFAULT_BG, "the fill stayed inside the border"
    assert image.getpixel((right - 1, bottom - 1)) == DEFAULT_BG


def test_block_elements_fill_their_part_of_the_cell() -> None:
    image = draw("█▀▄▌▐")
    left, top, right, bottom = box(0, 0)
    assert all(lit(image, px, py) for px in range(left, right) for py in range(top, bottom)), "█ fills the cell"
    left, top, right, bottom = box(1, 0)
    assert lit(image, left, top) and not lit(image, left, bottom - 1), "▀ is the upper half"
    left, top, right, bottom = box(2, 0)
    assert lit(image, left, bottom - 1) and not lit(image, left, top), "▄ is the lower half"
    left, top, right, bottom = box(3, 0)
    assert lit(image, left, top) and not lit(image, right - 1, top), "▌ is the left half"
    left, top, right, bottom = box(4, 0)
    assert lit(image, right - 1, top) and not lit(image, left, top), "▐ is the right half"


def test_shades_blend_the_foreground_into_the_background() -> None:
    image = draw("░▒▓")
    levels = [image.getpixel((box(x, 0)[0] + 1, box(x, 0)[1] + 1))[0] for x in range(3)]
    assert 0 < levels[0] < levels[1] < levels[2] < DEFAULT_FG[0]


def test_braille_dots_are_where_their_bits_say() -> None:
    image = draw("⠁⢀⠋⠙⠹")
    left, top, right, bottom = box(0, 0)  # dot 1: top left
    mid, quarter = (left + right) // 2, top + (bottom - top) // 4
    assert image.crop((left, top, mid, quarter)).getbbox() and not image.crop((mid, top, right, bottom)).getbbox()
    left, top, right, bottom = box(1, 0)  # dot 8: bottom right
    mid, three = (left + right) // 2, top + 3 * (bottom - top) // 4
    assert image.crop((mid, three, right, bottom)).getbbox() and not image.crop((left, top, right, three)).getbbox()
    assert len({ink(image, x, 0) for x in (2, 3, 4)}) == 3, "each spinner frame is its own pattern"


def test_powerline_separators_fill_the_cell_height() -> None:
    image = draw("\ue0b0\ue0b2")
    left, top, right, bottom = box(0, 0)
    assert lit(image, left, top) and lit(image, left, bottom - 1), "the right arrow's back edge is the full height"
    assert lit(image, right - 1, (top + bottom) // 2) and not lit(image, right - 1, top), "its point is mid-height"
    left, top, right, bottom = box(1, 0)
    assert lit(image, right - 1, top) and lit(image, right - 1, bottom - 1)


def test_a_wide_character_spans_both_cells_over_their_backgrounds() -> None:
    pytest.importorskip("noto_cjk_sans_jp_regular", reason="the cjk extra is not installed")
    image = draw("中a", bg=4)  # a blue background under both cells of 中
    left, top, right, bottom = box(0, 0, 2)
    middle = left + (right - left) // 2
    blue = render.palette(4)
    second = [image.getpixel((px, py)) for px in range(middle, right) for py in range(top, bottom)]
    assert any(pixel != blue for pixel in second), "中 reaches into its second cell, drawn after that cell's background"
    first = [image.getpixel((px, py)) for px in range(left, middle) for py in range(top, bottom)]
    assert any(pixel != blue for pixel in first)


def test_emoji_are_drawn_wide() -> None:
    image = draw(f"🎉{NOTDEF}")
    assert image.crop(box(0, 0, 2)).getbbox() is not None
    assert ink(image, 0, 0) != ink(image, 2, 0), "🎉 is not the missing box"


def test_zero_width_characters_draw_nothing() -> None:
    assert render.cells().mask("\ufe0f", "") is None
    assert render.cells().mask("\u200d", "") is None


def test_ascii_is_drawn_exactly_as_the_font_draws_it() -> None:
    """The mask cache changes no pixel: each cell equals ImageDraw.text of that character."""
    from PIL import Image, ImageDraw

    fonts = render._fonts()
    line = "Hi {x}_|@"
    for style, attrs in (("", {}), ("bold", {"bold": True}), ("italic", {"italic": True})):
        image = draw(line, **attrs)
        expected = Image.new("RGB", image.size, DEFAULT_BG)
        pen = ImageDraw.Draw(expected)
        for x, char in enumerate(line):
            if char != " ":
                left, top, _, _ = box(x, 0)
                pen.text((left, top + 1), char, font=fonts[style or "regular"], fill=DEFAULT_FG)
        assert image.tobytes() == expected.tobytes(), style or "regular"


def test_a_screen_of_ascii_never_opens_a_fallback_font(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = render.Cells()
    monkeypatch.setattr(render, "cells", lambda: fresh)
    draw("plain text, 0-9 ~!@#$%^&*()")
    assert fresh._glyphs is None


def test_a_fallback_that_is_not_installed_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    def absent() -> bytes:
        raise ImportError("not installed")

    monkeypatch.setattr(glyphs, "FALLBACKS", {name: absent for name in glyphs.FALLBACKS})
    monkeypatch.setattr(glyphs, "_scripts", lambda: {})
    fresh = render.Cells()
    monkeypatch.setattr(render, "cells", lambda: fresh)
    assert fresh.glyphs.plan("✓").kind == "missing"
    image = draw(f"✓{NOTDEF}")
    assert ink(image, 0, 0) == ink(image, 1, 0), "without a font for it ✓ is the box, as before"
    assert fresh.glyphs.plan("─").kind == "shape", "shapes need no font"


def test_symbols_come_from_the_symbol_font_and_letters_from_jetbrains_mono() -> None:
    plans = render.cells().glyphs
    assert plans.plan("A").kind == "primary" and plans.plan("é").kind == "primary"
    assert plans.plan("✓").kind == "font"
    assert plans.plan("│").kind == "shape" and plans.plan("\ue0b0").kind == "shape"


# --- the cmap reader ---------------------------------------------------------------------------


def font_with_cmap(subtables: list[tuple[int, int, bytes]]) -> bytes:
    """A minimal sfnt: a table directory with one cmap table holding these subtables."""
    header = struct.pack(">HH", 0, len(subtables))
    offset = 4 + 8 * len(subtables)
    records, bodies = b"", b""
    for platform, encoding, body in subtables:
        records += struct.pack(">HHI", platform, encoding, offset + len(bodies))
        bodies += body
    cmap = header + records + bodies
    directory = struct.pack(">IHHHH", 0x00010000, 1, 16, 0, 0) + struct.pack(">4sIII", b"cmap", 0, 12 + 16, len(cmap))
    return directory + cmap


def format4(segments: list[tuple[int, int, int, list[int] | None]]) -> bytes:
    """(start, end, idDelta, glyph ids or None for delta-only) per segment; 0xFFFF is added."""
    segments = [*segments, (0xFFFF, 0xFFFF, 1, None)]
    n = len(segments)
    ends = [s[1] for s in segments]
    starts = [s[0] for s in segments]
    deltas = [s[2] for s in segments]
    arrays: list[int] = []
    offsets = []
    for i, (_, _, _, ids) in enumerate(segments):
        if ids is None:
            offsets.append(0)
        else:
            offsets.append(2 * (n - i) + 2 * len(arrays))
            arrays += ids
    body = struct.pack(f">{n}H", *ends) + b"\0\0" + struct.pack(f">{n}H", *starts)
    body += struct.pack(f">{n}h", *deltas) + struct.pack(f">{n}H", *offsets) + struct.pack(f">{len(arrays)}H", *arrays)
    return struct.pack(">HHHHHHH", 4, 14 + len(body), 0, 2 * n, 0, 0, 0) + body


def test_cmap_format_4_with_deltas_and_glyph_arrays() -> None:
    table = format4([(0x41, 0x43, 10, None), (0x2713, 0x2715, 0, [7, 0, 9])])
    coverage = glyphs.read_coverage(font_with_cmap([(3, 1, table)]))
    assert all(c in coverage for c in (0x41, 0x42, 0x43, 0x2713, 0x2715))
    assert 0x2714 not in coverage, "a glyph id of 0 is .notdef: not covered"
    assert 0x40 not in coverage and 0x44 not in coverage and 0xFFFF not in coverage


def test_cmap_format_12_is_preferred_and_read() -> None:
    groups = [(0x20, 0x7E, 1), (0x1F389, 0x1F389, 200)]
    table = struct.pack(">HHIII", 12, 0, 16 + 12 * len(groups), 0, len(groups))
    table += b"".join(struct.pack(">III", *group) for group in groups)
    basic = format4([(0x20, 0x21, 5, None)])
    coverage = glyphs.read_coverage(font_with_cmap([(3, 1, basic), (3, 10, table)]))
    assert 0x1F389 in coverage and 0x7E in coverage and 0x7F not in coverage


def test_cmap_of_the_real_font() -> None:
    from agent_tty import fonts

    coverage = glyphs.read_coverage(fonts.path(fonts.PRIMARY))
    assert ord("A") in coverage and ord("─") in coverage and 0xE0B0 in coverage
    assert ord("✓") not in coverage and ord("中") not in coverage
