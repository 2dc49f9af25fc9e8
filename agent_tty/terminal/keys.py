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
    "pgup": b"\x1b[5~",
    "pagedown": b"\x1b[6~",
    "npage": b"\x1b[6~",
    "pgdn": b"\x1b[6~",
    "pgdown": b"\x1b[6~",
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
# With a modifier, xterm sends CSI 1;m X for cursor keys and F1-F4 and CSI n;m ~ for the rest,
# where m = 1 + Shift 1 + Alt 2 + Ctrl 4.
_TILDE = {"insert": 2, "ic": 2, "delete": 3, "del": 3, "pageup": 5, "ppage": 5, "pgup": 5, "pagedown": 6, "npage": 6, "pgdn": 6, "pgdown": 6,
          "f5": 15, "f6": 17, "f7": 18, "f8": 19, "f9": 20, "f10": 21, "f11": 23, "f12": 24}
_SS3_F = {"f1": b"P", "f2": b"Q", "f3": b"R", "f4": b"S"}
_MODIFIERS = (("ctrl+", 4), ("control+", 4), ("c-", 4), ("alt+", 2), ("meta+", 2), ("m-", 2), ("shift+", 1), ("s-", 1))
KEY_HELP = (
    "use Enter, Tab, Escape, Backspace, Delete, Up/Down/Left/Right, Home/End, PageUp/PageDown (PgUp/PgDn), "
    "Insert, F1-F12, a single character, or any of them after Ctrl+, Alt+ or Shift+ (C-, M-, S-)"
)


def _base(name: str, app_cursor: bool) -> bytes | None:
    lowered = name.lower()
    if lowered in _PLAIN:
        return _PLAIN[lowered]
    if lowered in _CURSOR:
        return (b"\x1bO" if app_cursor else b"\x1b[") + _CURSOR[lowered]
    if len(name) == 1:
        return name.encode()
    return None


def _split_modifiers(name: str) -> tuple[int, str]:
    """'Ctrl+Shift+Left' -> (4 | 1, 'Left'); a trailing '+' or '-' is the key itself."""
    mask = 0
    rest = name
    while True:
        lowered = rest.lower()
        for prefix, bit in _MODIFIERS:
            if lowered.startswith(prefix) and len(rest) > len(prefix):
                mask |= bit
                rest = rest[len(prefix) :]
                break
        else:
            return mask, rest


def _unknown(name: str) -> Exception:
    hint = ""
    if len(name) > 1:
        hint = f"; to type text, use `agent-tty type ID {name!r}` (then `send-keys ID Enter`)"
    return invalid(f"unknown key {name!r}: {KEY_HELP}{hint}", key=name)


def encode_key(name: str, app_cursor: bool = False) -> bytes:
    """'Enter', 'Up', 'F5', 'Ctrl+C' (or 'C-c'), 'Alt+x' (or 'M-x'), 'Shift+Tab', 'Ctrl+Left',
    'Shift+F5', 'a' -> the bytes xterm sends.

    Raises INVALID_INPUT (exit 2) naming the key when it is not in the table.
    """
    if not name:
        raise invalid("empty key name")
    mask, key = _split_modifiers(name)
    if not mask:
        encoded = _base(key, app_cursor)
        if encoded is None:
            raise _unknown(name)
        return encoded
    lowered = key.lower()
    ctrl, alt, shift = bool(mask & 4), bool(mask & 2), bool(mask & 1)
    if len(key) == 1 or lowered in _CTRL_SPECIAL:
        return _modified_character(name, key, ctrl, alt, shift)
    code = 1 + mask
    if lowered in _CURSOR:
        return b"\x1b[1;%d" % code + _CURSOR[lowered]
    if lowered in _SS3_F:
        return b"\x1b[1;%d" % code + _SS3_F[lowered]
    if lowered in _TILDE:
        return b"\x1b[%d;%d~" % (_TILDE[lowered], code)
    if lowered in ("tab", "btab") and mask == 1:
        return b"\x1b[Z"
    plain = _PLAIN.get(lowered)
    if plain is not None and mask == 2:
        return b"\x1b" + plain  # Alt+Enter, Alt+Backspace, ...: ESC then the key
    if plain is None:
        raise _unknown(name)
    raise invalid(f"no standard sequence for {name!r}: {KEY_HELP}", key=name)


def _modified_character(name: str, key: str, ctrl: bool, alt: bool, shift: bool) -> bytes:
    lowered = key.lower()
    if ctrl:
        if lowered in _CTRL_SPECIAL:
            byte = bytes([_CTRL_SPECIAL[lowered]])
        elif len(key) == 1 and key.isalpha():
            byte = bytes([ord(lowered) & 0x1F])
        else:
            raise invalid(f"unknown key {name!r}: Ctrl+ takes a letter or one of @ [ \\ ] ^ _ ? space", key=name)
    elif lowered == "space":
        byte = b" "
    else:
        byte = (key.upper() if shift else key).encode()
    return b"\x1b" + byte if alt else byte


def validate_keys(names: list[str]) -> None:
    for name in names:
        encode_key(name)
