"""Which font draws a character: JetBrains Mono, else the first installed fallback font that has it.

Coverage comes from each font's cmap (read here, a few dozen lines, rather than adding fontTools):
a missing glyph is a character the cmap does not map, never a guess from rendered pixels. Every
decision is cached per character, and a fallback font is opened only when a character first needs
it, so a screen of ASCII never touches them.

The fallbacks, in the order they are asked (the fonts agent-tty ships, agent_tty/fonts/, and one
optional package: a font that is missing or unreadable is skipped):

- ``text``: Noto Sans: letters and letterlike symbols (ℹ) that JetBrains Mono lacks.
- ``symbols``: Noto Sans Symbols 2: ✓ ✔ ✗ ✘ ★ ➜ ⚠ ⚡ and the rest of Dingbats, Miscellaneous
  Symbols, arrows and geometric shapes.
- ``emoji``: Noto Emoji, monochrome: no colour emoji font installs from PyPI, so emoji are drawn in
  the cell's foreground colour.
- ``cjk``: Noto Sans CJK JP (from ``noto-cjk-sans-jp-regular``, the ``cjk`` extra): Chinese,
  Japanese and Korean.
- then the other Noto Sans faces (Arabic, Hebrew, Devanagari, Thai, ..., Symbols), each opened
  only if a character gets that far.

Emoji (U+1F000 and above) ask ``emoji`` first and wide characters ``cjk`` first, so a line of CJK
text never opens the symbol font. A glyph wider than its cells (a fifth of a cell of overhang is
allowed) or taller than a cell is drawn smaller.
"""

from __future__ import annotations

import bisect
import io
import struct
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from agent_tty import fonts

# --- cmap -------------------------------------------------------------------------------------


class Coverage:
    """The code points a font maps to a glyph, as sorted inclusive ranges."""

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        ranges.sort()
        merged: list[tuple[int, int]] = []
        for start, end in ranges:
            if merged and start <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        self._starts = [start for start, _ in merged]
        self._ends = [end for _, end in merged]

    def __contains__(self, code: int) -> bool:
        i = bisect.bisect_right(self._starts, code) - 1
        return i >= 0 and code <= self._ends[i]


def read_coverage(source: str | Path | bytes) -> Coverage:
    """The cmap of an OpenType/TrueType font (or the first font of a collection)."""
    if isinstance(source, bytes):
        return _coverage(io.BytesIO(source))
    with open(source, "rb") as fp:
        return _coverage(fp)


def _coverage(fp: BinaryIO) -> Coverage:
    base = 0
    tag = fp.read(4)
    if tag == b"ttcf":
        fp.seek(12)
        (base,) = struct.unpack(">I", fp.read(4))
    fp.seek(base + 4)
    (count,) = struct.unpack(">H", fp.read(2))
    fp.seek(base + 12)
    directory = fp.read(16 * count)
    for i in range(count):
        name, _, offset, length = struct.unpack_from(">4sIII", directory, 16 * i)
        if name == b"cmap":
            fp.seek(offset)
            return Coverage(_cmap_ranges(fp.read(length)))
    raise ValueError("the font has no cmap table")


def _cmap_ranges(table: bytes) -> list[tuple[int, int]]:
    (count,) = struct.unpack_from(">H", table, 2)
    best: tuple[int, int] | None = None  # (format, offset): a Unicode subtable, format 12 over 4
    for i in range(count):
        platform, encoding, offset = struct.unpack_from(">HHI", table, 4 + 8 * i)
        if platform == 0 or (platform == 3 and encoding in (1, 10)):
            (fmt,) = struct.unpack_from(">H", table, offset)
            if fmt in (4, 12) and (best is None or fmt > best[0]):
                best = (fmt, offset)
    if best is None:
        raise ValueError("the font has no Unicode cmap")
    fmt, offset = best
    if fmt == 12:
        (groups,) = struct.unpack_from(">I", table, offset + 12)
        ranges = []
        for start, end, glyph in struct.iter_unpack(">III", table[offset + 16 : offset + 16 + 12 * groups]):
            if glyph == 0:
                start += 1  # only the first code point of a group can map to .notdef
            if start <= end:
                ranges.append((start, end))
        return ranges
    (seg_x2,) = struct.unpack_from(">H", table, offset + 6)
    segments = seg_x2 // 2
    ends = struct.unpack_from(f">{segments}H", table, offset + 14)
    starts = struct.unpack_from(f">{segments}H", table, offset + 16 + seg_x2)
    deltas = struct.unpack_from(f">{segments}h", table, offset + 16 + 2 * seg_x2)
    range_at = offset + 16 + 3 * seg_x2
    range_offsets = struct.unpack_from(f">{segments}H", table, range_at)
    ranges = []
    for i in range(segments):
        start, end, delta, range_offset = starts[i], ends[i], deltas[i], range_offsets[i]
        if start == 0xFFFF:
            continue
        if range_offset:  # glyph ids from the array that follows idRangeOffset
            for code in range(start, end + 1):
                (glyph,) = struct.unpack_from(">H", table, range_at + 2 * i + range_offset + 2 * (code - start))
                if glyph and (glyph + delta) & 0xFFFF:
                    ranges.append((code, code))
            continue
        zero = (-delta) & 0xFFFF  # the one code point whose glyph id would wrap to .notdef
        if start <= zero <= end:
            ranges += [(start, zero - 1), (zero + 1, end)]
        else:
            ranges.append((start, end))
    return [(s, e) for s, e in ranges if s <= e]


# --- the fallback fonts -----------------------------------------------------------------------


def _shipped(name: str) -> Callable[[], Path]:
    return lambda: fonts.path(name)


def _cjk() -> Path:
    import noto_cjk_sans_jp_regular

    return Path(str(noto_cjk_sans_jp_regular.FONT_PATH))


FALLBACKS: dict[str, Callable[[], bytes | Path]] = {
    "text": _shipped(fonts.TEXT),
    "symbols": _shipped(fonts.SYMBOLS),
    "emoji": _shipped(fonts.EMOJI),
    "cjk": _cjk,
}
"""Where each fallback font comes from: a function that returns its file or its bytes, or
raises ImportError (OSError) when its package is not installed."""


FONT_SOURCES = {
    "primary": ("agent_tty.fonts", "JetBrains Mono", fonts.PRIMARY),
    "text": ("agent_tty.fonts", "Noto Sans", fonts.TEXT),
    "symbols": ("agent_tty.fonts", "Noto Sans Symbols 2", fonts.SYMBOLS),
    "emoji": ("agent_tty.fonts", "Noto Emoji", fonts.EMOJI),
    "cjk": ("noto_cjk_sans_jp_regular", "Noto Sans CJK JP (agent-tty[cjk])", None),
}
"""Each role's package, font and, for the fonts agent-tty ships, its file."""


def font_report() -> dict[str, dict[str, object]]:
    """Which screenshot fonts are there (for doctor): a shipped font by its file, the others by
    their package; none is opened."""
    import importlib.util

    report: dict[str, dict[str, object]] = {}
    for role, (package, font, name) in FONT_SOURCES.items():
        if name is not None:
            installed = fonts.path(name).is_file()
        else:
            try:
                installed = importlib.util.find_spec(package) is not None
            except (ImportError, ValueError):
                installed = False
        report[role] = {"font": font, "package": package, "installed": installed}
    return report


def _scripts() -> dict[str, Callable[[], bytes | Path]]:
    """The other Noto Sans faces agent-tty ships (Arabic, Hebrew, ...), asked last."""
    return {path.name: (lambda path=path: path) for path in fonts.scripts()}


class Fallback:
    """One fallback font: opened, and its cmap read, the first time a character asks for it."""

    def __init__(self, name: str, load: Callable[[], bytes | Path]) -> None:
        self.name = name
        self._load = load
        self._source: bytes | Path | None = None
        self._coverage: Coverage | None = None
        self._failed = False
        self._sizes: dict[int, Any] = {}

    def has(self, code: int) -> bool:
        if self._coverage is None and not self._failed:
            try:
                self._source = self._load()
                self._coverage = read_coverage(self._source)
            except (ImportError, OSError, ValueError, struct.error):
                self._failed = True  # not installed (or unreadable): this fallback is skipped
        return self._coverage is not None and code in self._coverage

    def font(self, size: int) -> Any:
        if size not in self._sizes:
            from PIL import ImageFont

            source = self._source
            self._sizes[size] = ImageFont.truetype(io.BytesIO(source) if isinstance(source, bytes) else str(source), size)
        return self._sizes[size]


@dataclass(frozen=True)
class Plan:
    """How one character is drawn: `kind` is "primary" (JetBrains Mono), "shape" (boxdraw),
    "font" (a fallback, at `font` with its baseline `dy` below the cell's and `dx` right of its
    left edge), "skip" (a zero-width character) or "missing" (JetBrains Mono's box)."""

    kind: str
    font: Any = None
    dx: int = 0
    dy: int = 0


class Glyphs:
    """The per-character decisions for one cell size, cached; built once per process."""

    def __init__(self, primary: Coverage, size: int, cell_w: int, cell_h: int, ascent: int) -> None:
        self.primary = primary
        self.size = size
        self.cell_w, self.cell_h, self.ascent = cell_w, cell_h, ascent
        self.fallbacks = {name: Fallback(name, load) for name, load in FALLBACKS.items()}
        self.scripts = [Fallback(name, load) for name, load in _scripts().items()]
        self._plans: dict[tuple[str, int], Plan] = {}

    def plan(self, char: str, cells: int = 1) -> Plan:
        key = (char, cells)
        found = self._plans.get(key)
        if found is None:
            found = self._plans[key] = self._decide(char, cells)
        return found

    def _decide(self, char: str, cells: int) -> Plan:
        from agent_tty.terminal import boxdraw

        first = char[0]
        code = ord(first)
        if len(char) == 1 and boxdraw.covers(first):
            return Plan("shape")
        if code in self.primary:
            return Plan("primary")
        if unicodedata.category(first) in ("Mn", "Me", "Cf"):
            return Plan("skip")  # variation selectors, joiners: nothing of their own to draw
        if code >= 0x1F000:
            order = ("emoji", "symbols", "text", "cjk")
        elif unicodedata.east_asian_width(first) in ("W", "F"):
            order = ("cjk", "emoji", "symbols", "text")
        else:
            order = ("text", "symbols", "emoji", "cjk")
        for fallback in [self.fallbacks[name] for name in order] + self.scripts:
            if fallback.has(code):
                try:
                    return self._fit(fallback, char, cells)
                except OSError:  # FreeType refused the font after all: try the next one
                    continue
        return Plan("missing")

    def _fit(self, fallback: Fallback, char: str, cells: int) -> Plan:
        """The fallback glyph at the primary size, made smaller if its ink is wider than its
        cells or taller than a cell, centred across its cells, on the primary font's baseline
        unless that would push it out of the cell."""
        span = self.cell_w * cells
        size = self.size
        font = fallback.font(size)
        left, top, right, bottom = font.getbbox(char, anchor="ls")
        room = span + self.cell_w // 5
        scale = min(1.0, room / max(1, right - left), self.cell_h / max(1, bottom - top))
        if scale < 1.0:
            size = max(6, int(size * scale))
            font = fallback.font(size)
            left, top, right, bottom = font.getbbox(char, anchor="ls")
        dx = (span - (right - left)) / 2 - left
        baseline = 1 + self.ascent
        if baseline + top < 0 or baseline + bottom > self.cell_h:
            baseline = (self.cell_h - (bottom - top)) / 2 - top
        return Plan("font", font, round(dx), round(baseline))
