"""The fonts agent-tty ships (agent_tty/fonts/, ADR 0039): each is the file its hash names, each
has its copyright notice and licence, and each one a role asks for is there and draws."""

from __future__ import annotations

import hashlib

from agent_tty import fonts
from agent_tty.terminal import glyphs


def _sums() -> dict[str, str]:
    lines = (fonts.FOLDER / "SHA256SUMS").read_text().splitlines()
    return {name: digest for digest, name in (line.split("  ", 1) for line in lines if line)}


def test_every_shipped_font_is_the_file_its_hash_names() -> None:
    sums = _sums()
    on_disk = {found.name for found in fonts.FOLDER.glob("*.ttf")}
    assert on_disk == set(sums), "SHA256SUMS lists exactly the shipped fonts"
    for name, digest in sums.items():
        assert hashlib.sha256(fonts.path(name).read_bytes()).hexdigest() == digest, name


def test_every_shipped_font_has_its_notice_and_the_licence() -> None:
    licence = (fonts.FOLDER / "OFL.txt").read_text()
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence
    readme = (fonts.FOLDER / "README.md").read_text()
    for name in _sums():
        assert name in licence, f"{name}: no copyright notice in OFL.txt"
        assert f"`{name}`" in readme, f"{name}: not in the README's table"


def test_every_role_the_renderer_asks_for_is_shipped_and_has_its_characters() -> None:
    report = glyphs.font_report()
    for role in ("primary", "text", "symbols", "emoji"):
        assert report[role]["installed"] is True, role
    for role, char in (("text", "ℹ"), ("symbols", "✓"), ("emoji", "🎉")):
        source = glyphs.FALLBACKS[role]()
        assert ord(char) in glyphs.read_coverage(source), (role, char)
    scripts = {found.name for found in fonts.scripts()}
    assert "NotoSansArabic[wght].ttf" in scripts and "NotoSansHebrew[wght].ttf" in scripts
    assert not scripts & {fonts.TEXT, fonts.SYMBOLS, fonts.PRIMARY, fonts.EMOJI}, "a role's font is not asked twice"
