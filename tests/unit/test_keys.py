"""Named keys to the bytes xterm sends, modifiers included."""

from __future__ import annotations

import pytest

from agent_tty.protocol.errors import AgentTtyError
from agent_tty.terminal.keys import encode_key


@pytest.mark.parametrize(
    ("name", "sent"),
    [
        ("Enter", b"\r"),
        ("C-c", b"\x03"),
        ("Ctrl+C", b"\x03"),
        ("M-x", b"\x1bx"),
        ("Shift+Tab", b"\x1b[Z"),
        ("S-Tab", b"\x1b[Z"),
        ("Ctrl+Left", b"\x1b[1;5D"),
        ("Alt+Right", b"\x1b[1;3C"),
        ("Shift+Up", b"\x1b[1;2A"),
        ("Ctrl+Shift+End", b"\x1b[1;6F"),
        ("Shift+Home", b"\x1b[1;2H"),
        ("Shift+F1", b"\x1b[1;2P"),
        ("Ctrl+F4", b"\x1b[1;5S"),
        ("Alt+F5", b"\x1b[15;3~"),
        ("Ctrl+F12", b"\x1b[24;5~"),
        ("Ctrl+Delete", b"\x1b[3;5~"),
        ("Shift+PageUp", b"\x1b[5;2~"),
        ("Ctrl+Alt+x", b"\x1b\x18"),
        ("Alt+Enter", b"\x1b\r"),
        ("Shift+a", b"A"),
        ("C-space", b"\x00"),
        ("+", b"+"),
        ("-", b"-"),
    ],
)
def test_xterm_sequences(name: str, sent: bytes) -> None:
    assert encode_key(name) == sent


def test_application_cursor_mode_applies_to_plain_arrows_only() -> None:
    assert encode_key("Up", app_cursor=True) == b"\x1bOA"
    assert encode_key("Ctrl+Up", app_cursor=True) == b"\x1b[1;5A"


@pytest.mark.parametrize("name", ["ls -la", "Ctrl+1", "Shift+Enter", "Hyper+x"])
def test_unknown_keys_are_refused_with_the_table(name: str) -> None:
    with pytest.raises(AgentTtyError) as raised:
        encode_key(name)
    assert raised.value.exit_code == 2
    assert "Ctrl+" in raised.value.message


def test_text_given_as_a_key_points_to_type() -> None:
    with pytest.raises(AgentTtyError, match="agent-tty type ID 'ls -la'"):
        encode_key("ls -la")
