from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

import pytest

from agent_tty_plugins.windows_conpty import job, layer
from tests.platforms.windows_conpty.fake_win32 import FakeWin32, LinuxWin32

Layer = TypeVar("Layer", FakeWin32, LinuxWin32)


def _installed(fake: Layer) -> Iterator[Layer]:
    """`fake` as the plugin's Windows layer for one test; the jobs it held are forgotten after."""
    old = layer.install(fake)
    try:
        yield fake
    finally:
        layer.install(old)
        job._held.clear()


@pytest.fixture
def win() -> Iterator[FakeWin32]:
    yield from _installed(FakeWin32())


@pytest.fixture
def linux_win() -> Iterator[LinuxWin32]:
    yield from _installed(LinuxWin32())
