"""The screenshot fonts agent-tty ships: the upstream projects' files, unmodified (OFL-1.1).

Which file comes from which project, at which version, and each one's SHA-256 are in
`SHA256SUMS` and `README.md` beside this file; their licence and copyright notices in `OFL.txt`.
Nothing here is opened until a screenshot needs a glyph from it (agent_tty/terminal/render.py).
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).parent

PRIMARY = "JetBrainsMono[wght].ttf"
PRIMARY_ITALIC = "JetBrainsMono-Italic[wght].ttf"
TEXT = "NotoSans[wght].ttf"
SYMBOLS = "NotoSansSymbols2-Regular.ttf"
EMOJI = "NotoEmoji[wght].ttf"


def path(name: str) -> Path:
    """The shipped font file `name` (it may be missing from a broken install: opening it says so)."""
    return FOLDER / name


def scripts() -> list[Path]:
    """The Noto Sans faces for other scripts (Arabic, Hebrew, Devanagari, ...), asked last."""
    roles = {TEXT, SYMBOLS}
    return [found for found in sorted(FOLDER.glob("NotoSans*.ttf")) if found.name not in roles]
