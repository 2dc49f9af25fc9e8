from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_tty_plugins.windows_conpty import job, layer
from tests.platforms.windows_conpty.fake_win32 import FakeWin32, LinuxWin32


@pytest.fixture
def win() -> Iterator[FakeWin32]:
    fake = FakeWin32()
    old = layer.install(fake)
    try:
        yield fake
    finally:
        layer.install(old)
        job._held.clear()


@pytest.fixture
def linux_win() -> Iterator[LinuxWin32]:
    fake = LinuxWin32()
    old = layer.install(fake)
    try:
        yield fake
    finally:
        layer.install(old)
        job._held.clear()
