"""The socket folder check (storage/home.py, ADR 0008) walks the folders above a socket folder
only where no check of this engine already did: right inside a checked Home, the Home's own
check covered them (issue 26); anywhere else, or for an engine whose Home was not checked, they
are walked on every call, and every refusal stays."""

from __future__ import annotations

import os

import pytest

from agent_tty.lifecycle.engine import engine_for
from agent_tty.storage.home import check_socket_dir, trusted_socket_path
from agent_tty.storage.trust import UnsafeHome


@pytest.fixture
def stats(monkeypatch):  # type: ignore[no-untyped-def]
    """The paths os.stat and os.lstat are asked about."""
    seen: list[str] = []
    stat, lstat = os.stat, os.lstat

    def counted(real):  # type: ignore[no-untyped-def]
        def call(path, *args, **kwargs):  # type: ignore[no-untyped-def]
            seen.append(str(path))
            return real(path, *args, **kwargs)

        return call

    monkeypatch.setattr(os, "stat", counted(stat))
    monkeypatch.setattr(os, "lstat", counted(lstat))
    return seen


def _home(tmp_path):  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    for folder in (home, home / "sessions", home / "run"):
        folder.mkdir(mode=0o700)
    return home.resolve()


def test_a_socket_folder_in_a_checked_home_is_checked_without_the_walk_above_it(tmp_path, stats) -> None:  # type: ignore[no-untyped-def]
    home = _home(tmp_path)
    engine = engine_for(str(home))
    socket = str(home / "run" / "abc.sock")
    stats.clear()
    assert trusted_socket_path(socket, "abc", engine.home.root if engine.home_checked else None) == socket
    assert stats == [str(home / "run")]
    stats.clear()
    check_socket_dir(home / "run")  # no checked Home: every folder above is walked, as before
    assert stats[0] == str(home / "run") and str(home) in stats and "/" in stats


def test_the_socket_folder_itself_is_still_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    home = _home(tmp_path)
    (home / "run").chmod(0o755)  # readable by others: not private
    with pytest.raises(UnsafeHome) as info:
        check_socket_dir(home / "run", home)
    assert info.value.details["problem"] == "writable"


def test_a_socket_folder_elsewhere_has_its_ancestors_walked_even_with_a_checked_home(tmp_path) -> None:  # type: ignore[no-untyped-def]
    home = _home(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # others may rename what it holds: an ancestor no socket folder may have
    (shared / "run").mkdir(mode=0o700)
    with pytest.raises(UnsafeHome) as info:
        check_socket_dir(shared / "run", home)
    assert info.value.details["problem"] == "ancestor"


def test_a_home_that_did_not_exist_when_the_engine_was_made_is_walked_above(tmp_path, stats) -> None:  # type: ignore[no-untyped-def]
    """check_home of a missing Home checks only the folders above it: the Home itself, made later
    (by anyone the folder above lets: /tmp lets every user), was never checked, so it cannot
    stand in for the walk above its socket folder."""
    home = tmp_path / "home"
    engine = engine_for(str(home))
    assert not engine.home_checked
    _home(tmp_path)
    stats.clear()
    socket = str(home.resolve() / "run" / "abc.sock")
    assert trusted_socket_path(socket, "abc", engine.home.root if engine.home_checked else None) == socket
    assert str(home.resolve()) in stats and "/" in stats
