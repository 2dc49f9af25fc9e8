"""Box drawing, block elements, braille and Powerline separators drawn as shapes that fill the cell.

A font's glyphs for these stop short of the cell (JetBrains Mono's │ leaves 2 of 24 pixel rows
empty), so lines break between rows. Terminals (kitty, WezTerm, Ghostty) draw them themselves;
so do we: each is an 8-bit mask the size of a cell, made once per character and cell size, that
the renderer stamps in the foreground colour. Straight lines are drawn on the pixel grid, so
neighbouring cells join exactly; curves, diagonals and dots are drawn 4x larger and reduced, so
their edges are smoothed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

SCALE = 4  # supersampling of the curved and slanted shapes
NONE, LIGHT, HEAVY, DOUBLE = 0, 1, 2, 3

# U+2500-257F: the weight of the up, right, down and left arm of each character (0 none, 1 light,
# 2 heavy, 3 double), from the Unicode names ("DOWN LIGHT AND RIGHT HEAVY" is 0210); "----" marks
# the dashes, arcs and diagonals, which are drawn apart.
_ARMS = (
    "0101 0202 1010 2020 ---- ---- ---- ---- ---- ---- ---- ---- 0110 0210 0120 0220 "
    "0011 0012 0021 0022 1100 1200 2100 2200 1001 1002 2001 2002 1110 1210 2110 1120 "
    "2120 2210 1220 2220 1011 1012 2011 1021 2021 2012 1022 2022 0111 0112 0211 0212 "
    "0121 0122 0221 0222 1101 1102 1201 1202 2101 2102 2201 2202 1111 1112 1211 1212 "
    "2111 1121 2121 2112 2211 1122 1221 2212 1222 2122 2221 2222 ---- ---- ---- ---- "
    "0303 3030 0310 0130 0330 0013 0031 0033 1300 3100 3300 1003 3001 3003 1310 3130 "
    "3330 1013 3031 3033 0313 0131 0333 1303 3101 3303 1313 3131 3333 ---- ---- ---- "
    "---- ---- ---- ---- 0001 1000 0100 0010 0002 2000 0200 0020 0201 1020 0102 2010"
).split()
# Dashes: (horizontal, weight, number of dashes).
_DASHES = {
    0x2504: (True, LIGHT, 3), 0x2505: (True, HEAVY, 3), 0x2506: (False, LIGHT, 3), 0x2507: (False, HEAVY, 3),
    0x2508: (True, LIGHT, 4), 0x2509: (True, HEAVY, 4), 0x250A: (False, LIGHT, 4), 0x250B: (False, HEAVY, 4),
    0x254C: (True, LIGHT, 2), 0x254D: (True, HEAVY, 2), 0x254E: (False, LIGHT, 2), 0x254F: (False, HEAVY, 2),
}
# Rounded corners ╭╮╯╰: which way the two arms go (x, y).
_ARCS = {0x256D: (1, 1), 0x256E: (-1, 1), 0x256F: (-1, -1), 0x2570: (1, -1)}
# Braille dots: bit i of (code - U+2800) is the dot at (column, row).
_BRAILLE = ((0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (0, 3), (1, 3))
_POWERLINE = range(0xE0B0, 0xE0C0)
Rect = Callable[[int, int, int, int], None]
"""Fills the pixels from (x0, y0) to (x1, y1), both included."""


def covers(char: str) -> bool:
    """Whether `char` (one code point) is drawn here rather than from a font."""
    code = ord(char)
    return 0x2500 <= code <= 0x259F or 0x2800 <= code <= 0x28FF or code in _POWERLINE


@functools.lru_cache(maxsize=1024)
def mask(char: str, width: int, height: int) -> Any:
    """An "L" image of width x height: 255 where the foreground covers the cell, 0 where not."""
    from PIL import Image, ImageDraw

    image = Image.new("L", (width, height), 0)
    draw = ImageDraw.Draw(image)
    code = ord(char)
    if 0x2580 <= code <= 0x259F:
        _block(draw, code, width, height)
    elif code < 0x2580:
        _box(image, draw, code, width, height)
    elif 0x2800 <= code <= 0x28FF:
        image = _smooth(width, height, lambda d, s: _braille(d, code - 0x2800, width, height, s))
    else:
        image = _smooth(width, height, lambda d, s: _powerline(d, code, width, height, s))
    return image


def thickness(width: int) -> int:
    """A light line's width in pixels; heavy lines are three times it."""
    return max(1, round(width / 10))


# --- box drawing -----------------------------------------------------------------------------


def _span(weight: int, t: int) -> tuple[int, int]:
    """The pixels a line of this weight covers across its length, relative to the centre."""
    if weight == LIGHT:
        return -(t // 2), t - 1 - t // 2
    if weight in (HEAVY, DOUBLE):
        return -(3 * t // 2), 3 * t - 1 - 3 * t // 2
    return 0, 0


def _reach(a: int, b: int, sign: int, lo: int, hi: int, t: int) -> int:
    """Where a single (light or heavy) arm starts (sign 1) or ends (sign -1), relative to the
    centre, given the two arms across it: it meets the nearer line of a double line that runs
    through (╤), the farther one of a double corner (╒), and covers a single line (┼)."""
    d_lo, d_hi = _span(DOUBLE, t)
    if a == DOUBLE and b == DOUBLE:
        return d_hi - t + 1 if sign > 0 else d_lo + t - 1
    if DOUBLE in (a, b):
        return d_lo if sign > 0 else d_hi
    return min(lo, 0) if sign > 0 else max(hi, 0)


def _box(image: Any, draw: Any, code: int, w: int, h: int) -> None:
    t = thickness(w)
    cx, cy = w // 2, h // 2
    if code in _DASHES:
        horizontal, weight, count = _DASHES[code]
        lo, hi = _span(weight, t)
        length = w if horizontal else h
        step = length / count
        gap = max(1, round(step / 3))
        for i in range(count):
            a, b = round(i * step), round((i + 1) * step) - gap - 1
            if horizontal:
                draw.rectangle([a, cy + lo, b, cy + hi], fill=255)
            else:
                draw.rectangle([cx + lo, a, cx + hi, b], fill=255)
        return
    if code in _ARCS:
        _arc(image, code, w, h, t)
        return
    if 0x2571 <= code <= 0x2573:
        smooth = _smooth(w, h, lambda d, s: _diagonals(d, code, w, h, t, s))
        image.paste(smooth)
        return
    up, right, down, left = (int(c) for c in _ARMS[code - 0x2500])

    def rect(x0: int, y0: int, x1: int, y1: int) -> None:
        if x1 >= x0 and y1 >= y0:
            draw.rectangle([x0, y0, x1, y1], fill=255)

    # The horizontal arms, then the vertical ones: the same drawing with x and y swapped.
    _arms(rect, cx, cy, w, (left, right), (up, down), t)
    _arms(lambda a0, c0, a1, c1: rect(c0, a0, c1, a1), cy, cx, h, (up, down), (left, right), t)


def _arms(rect: Rect, mid: int, across: int, length: int, arms: tuple[int, int], crossing: tuple[int, int], t: int) -> None:
    """The two arms along one axis. `rect(along0, across0, along1, across1)` fills pixels by
    their place along the axis and across it; `mid` and `across` are the centre's; `arms` are
    the weights towards 0 and towards `length`, `crossing` those of the lines across the centre
    (before and after it)."""
    before, after = crossing
    # How far the lines across reach, so a corner or junction is filled in.
    reach = min(_span(before, t)[0], _span(after, t)[0]), max(_span(before, t)[1], _span(after, t)[1])
    for weight, sign in ((arms[1], 1), (arms[0], -1)):
        if weight == NONE:
            continue
        lo, hi = _span(weight, t)
        if weight != DOUBLE:
            lines = [(across + lo, across + hi, mid + _reach(before, after, sign, *reach, t))]
        else:
            # Two lines: each stops where it meets a double line across, or runs on to the far one.
            lines = []
            for start, near, far in ((across + lo, before, after), (across + hi - t + 1, after, before)):
                if near == DOUBLE:
                    edge = (mid + hi - t + 1) if sign > 0 else (mid + lo + t - 1)
                elif far == DOUBLE:
                    edge = (mid + lo) if sign > 0 else (mid + hi)
                elif before or after:
                    edge = mid + (reach[0] if sign > 0 else reach[1])
                else:
                    edge = mid
                lines.append((start, start + t - 1, edge))
        for a0, a1, edge in lines:
            if sign > 0:
                rect(edge, a0, length - 1, a1)
            else:
                rect(0, a0, edge, a1)


def _arc(image: Any, code: int, w: int, h: int, t: int) -> None:
    """A rounded corner: a quarter circle of radius half a cell width, then straight to the edges."""
    from PIL import ImageDraw

    dx, dy = _ARCS[code]
    cx, cy = w // 2, h // 2
    r = max(2, min(w, h) // 2)
    lo, hi = _span(LIGHT, t)
    draw = ImageDraw.Draw(image)

    def rect(x0: int, y0: int, x1: int, y1: int) -> None:
        if x1 >= x0 and y1 >= y0:
            draw.rectangle([x0, y0, x1, y1], fill=255)

    if dx > 0:
        rect(cx + r, cy + lo, w - 1, cy + hi)
    else:
        rect(0, cy + lo, cx - r, cy + hi)
    if dy > 0:
        rect(cx + lo, cy + r, cx + hi, h - 1)
    else:
        rect(cx + lo, 0, cx + hi, cy - r)

    def curve(draw: Any, s: int) -> None:
        # Centre of the circle, in supersampled coordinates of pixel centres.
        ox, oy = (cx + 0.5 + dx * r) * s, (cy + 0.5 + dy * r) * s
        points = []
        for i in range(17):
            angle = math.pi / 2 * i / 16
            points.append((ox - dx * r * s * math.cos(angle), oy - dy * r * s * math.sin(angle)))
        draw.line(points, fill=255, width=t * s, joint="curve")

    arc = _smooth(w, h, curve)
    image.paste(255, (0, 0), arc)


def _diagonals(draw: Any, code: int, w: int, h: int, t: int, s: int) -> None:
    if code in (0x2571, 0x2573):
        draw.line([(w * s, 0), (0, h * s)], fill=255, width=t * s)
    if code in (0x2572, 0x2573):
        draw.line([(0, 0), (w * s, h * s)], fill=255, width=t * s)


# --- block elements ----------------------------------------------------------------------------


def _block(draw: Any, code: int, w: int, h: int) -> None:
    def rect(x0: int, y0: int, x1: int, y1: int, fill: int = 255) -> None:
        if x1 > x0 and y1 > y0:
            draw.rectangle([x0, y0, x1 - 1, y1 - 1], fill=fill)

    mx, my = w // 2, h // 2
    if code == 0x2580:  # ▀
        rect(0, 0, w, my)
    elif 0x2581 <= code <= 0x2588:  # ▁▂▃▄▅▆▇█: lower eighths
        rect(0, h - round(h * (code - 0x2580) / 8), w, h)
    elif 0x2589 <= code <= 0x258F:  # ▉▊▋▌▍▎▏: left eighths
        rect(0, 0, round(w * (0x2590 - code) / 8), h)
    elif code == 0x2590:  # ▐
        rect(mx, 0, w, h)
    elif 0x2591 <= code <= 0x2593:  # ░▒▓: the foreground at a quarter, half, three quarters
        rect(0, 0, w, h, fill=64 * (code - 0x2590))
    elif code == 0x2594:  # ▔
        rect(0, 0, w, round(h / 8))
    elif code == 0x2595:  # ▕
        rect(w - round(w / 8), 0, w, h)
    else:  # ▖▗▘▙▚▛▜▝▞▟: quadrants, as bits upper-left, upper-right, lower-left, lower-right
        bits = {0x2596: 4, 0x2597: 8, 0x2598: 1, 0x2599: 13, 0x259A: 9, 0x259B: 7, 0x259C: 11, 0x259D: 2, 0x259E: 6, 0x259F: 14}[code]
        for bit, (x0, y0, x1, y1) in zip((1, 2, 4, 8), ((0, 0, mx, my), (mx, 0, w, my), (0, my, mx, h), (mx, my, w, h))):
            if bits & bit:
                rect(x0, y0, x1, y1)


# --- braille and Powerline ---------------------------------------------------------------------


def _braille(draw: Any, dots: int, w: int, h: int, s: int) -> None:
    radius = max(0.8, min(w / 2, h / 4) * 0.3) * s
    for bit, (col, row) in enumerate(_BRAILLE):
        if dots & (1 << bit):
            x, y = (col + 0.5) * w / 2 * s, (row + 0.5) * h / 4 * s
            draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=255)


def _powerline(draw: Any, code: int, w: int, h: int, s: int) -> None:
    W, H = w * s, h * s
    line = thickness(w) * s
    if code == 0xE0B0:  # solid arrow pointing right
        draw.polygon([(0, 0), (W, H / 2), (0, H)], fill=255)
    elif code == 0xE0B2:  # solid arrow pointing left
        draw.polygon([(W, 0), (0, H / 2), (W, H)], fill=255)
    elif code == 0xE0B1:  # thin arrow pointing right
        draw.line([(0, 0), (W - line / 2, H / 2), (0, H)], fill=255, width=line, joint="curve")
    elif code == 0xE0B3:  # thin arrow pointing left
        draw.line([(W, 0), (line / 2, H / 2), (W, H)], fill=255, width=line, joint="curve")
    elif code == 0xE0B4:  # right half circle
        draw.ellipse([-W, 0, W - 1, H - 1], fill=255)
    elif code == 0xE0B6:  # left half circle
        draw.ellipse([0, 0, 2 * W - 1, H - 1], fill=255)
    elif code == 0xE0B5:
        draw.arc([-W + line / 2, line / 2, W - line / 2, H - line / 2], -90, 90, fill=255, width=line)
    elif code == 0xE0B7:
        draw.arc([line / 2, line / 2, 2 * W - line / 2, H - line / 2], 90, 270, fill=255, width=line)
    elif code == 0xE0B8:  # lower left triangle
        draw.polygon([(0, 0), (W, H), (0, H)], fill=255)
    elif code == 0xE0BA:  # lower right triangle
        draw.polygon([(W, 0), (W, H), (0, H)], fill=255)
    elif code == 0xE0BC:  # upper left triangle
        draw.polygon([(0, 0), (W, 0), (0, H)], fill=255)
    elif code == 0xE0BE:  # upper right triangle
        draw.polygon([(0, 0), (W, 0), (W, H)], fill=255)
    elif code in (0xE0B9, 0xE0BF):  # backslash separators
        draw.line([(0, 0), (W, H)], fill=255, width=line)
    else:  # U+E0BB, E0BD: forward slash separators
        draw.line([(W, 0), (0, H)], fill=255, width=line)


def _smooth(w: int, h: int, paint: Any) -> Any:
    """Paint at SCALE times the size and reduce: an anti-aliased mask of w x h."""
    from PIL import Image, ImageDraw

    big = Image.new("L", (w * SCALE, h * SCALE), 0)
    paint(ImageDraw.Draw(big), SCALE)
    return big.resize((w, h), Image.Resampling.BOX)
