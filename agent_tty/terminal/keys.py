"""Key names to the bytes a terminal sends, with application cursor mode respected."""

from __future__ import annotations

from agent_tty.protocol.errors import invalid

_PLAIN: dict[str, bytes] = {
    "enter": b"\r",
    "return": b"\r",
    "tab": b"\t",
    "shift+tab": b"\x1b[Z",
    "btab": b"\x1b[Z",
    "escape": b"\x1b",
    "esc": b"\x1b",
    "backspace": b"\x7f",
    "bspace": b"\x7f",
    "delete": b"\x1b[3~",
    "del": b"\x1b[3~",
    "insert": b"\x1b[2~",
    "ic": b"\x1b[2~",
    "pageup": b"\x1b[5~",
    "ppage": b"\x1b[5~",
    "pagedown": b"\x1b[6~",
    "npage": b"\x1b[6~",
    "space": b" ",
    "f1": b"\x1bOP",
    "f2": b"\x1bOQ",
    "f3": b"\x1bOR",
    "f4": b"\x1bOS",
    "f5": b"\x1b[15~",
    "f6": b"\x1b[17~",
    "f7": b"\x1b[18~",
    "f8": b"\x1b[19~",
    "f9": b"\x1b[20~",
    "f10": b"\x1b[21~",
    "f11": b"\x1b[23~",
    "f12": b"\x1b[24~",
}
# Cursor keys: CSI form normally, SS3 form in application cursor mode (DECCKM).
_CURSOR: dict[str, bytes] = {"up": b"A", "down": b"B", "right": b"C", "left": b"D", "home": b"H", "end": b"F"}
_CTRL_SPECIAL = {"@": 0, "space": 0, "[": 27, "\\": 28, "]": 29, "^": 30, "_": 31, "?": 127}


def _base(name: str, app_cursor: bool) -> bytes | None:
    lowered = name.lower()
    if lowered in _PLAIN:
        return _PLAIN[lowered]
    if lowered in _CURSOR:
        return (b"\x1bO" if app_cursor else b"\x1b[") + _CURSOR[lowered]
    if len(name) == 1:
        return name.encode()
    return None


def encode_key(name: str, app_cursor: bool = False) -> bytes:
    """'Enter', 'Up', 'F5', 'Ctrl+C' (or 'C-c'), 'Alt+x' (or 'M-x'), 'Shift+Tab', 'a' -> bytes.

    Raises INVALID_INPUT (exit 2) naming the key when it is not in the table.
    """
    if not name:
        raise invalid("empty key name")
    lowered = name.lower()
    if lowered in ("shift+tab",):
        return _PLAIN[lowered]
    for prefix in ("ctrl+", "c-", "control+"):
        if lowered.startswith(prefix) and len(name) > len(prefix):
            rest = name[len(prefix) :]
            if rest.lower() in _CTRL_SPECIAL:
                return bytes([_CTRL_SPECIAL[rest.lower()]])
            if len(rest) == 1 and rest.isalpha():
                return bytes([ord(rest.lower()) & 0x1F])
            raise invalid(f"unknown key {name!r}: Ctrl+ takes a letter or one of @ [ \\ ] ^ _ ?", key=name)
    for prefix in ("alt+", "m-", "meta+"):
        if lowered.startswith(prefix) and len(name) > len(prefix):
            return b"\x1b" + encode_key(name[len(prefix) :], app_cursor)
    encoded = _base(name, app_cursor)
    if encoded is None:
        raise invalid(
            f"unknown key {name!r}: use Enter, Tab, Escape, Backspace, Delete, Up/Down/Left/Right, Home/End, "
            "PageUp/PageDown, Insert, F1-F12, Ctrl+<key>, Alt+<key>, Shift+Tab or a single character",
            key=name,
        )
    return encoded


def validate_keys(names: list[str]) -> None:
    for name in names:
        encode_key(name)
