"""The host's manifest writer: call order, and nothing after a terminal record (R7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tty.host.writer import ManifestWriter
from agent_tty.protocol.status import Status
from agent_tty.storage.files import FolderGone
from agent_tty.storage.home import Home
from agent_tty.storage.records import Manifest


def _writer(tmp_path: Path) -> tuple[ManifestWriter, Path]:
    paths = Home(tmp_path).session("abc")
    paths.folder.mkdir(parents=True)
    manifest = Manifest(
        version=1, session_id="abc", status=Status.RUNNING, argv=("sh",), cols=80, rows=24,
        created_at=1.0, updated_at=1.0, socket_path="/tmp/x.sock",
    )
    return ManifestWriter(paths, manifest), paths.manifest


def test_nothing_after_a_terminal_record(tmp_path: Path) -> None:
    """HostStopsAfterTerminalWrite: gc may remove the folder right after the terminal write."""
    writer, path = _writer(tmp_path)
    assert writer.write(status=Status.DESTROYING)
    assert writer.write(status=Status.DESTROYED, exit_code=0)
    assert writer.write(status=Status.RUNNING) is False
    assert writer.write(status=Status.EXITED) is False
    assert json.loads(path.read_text())["status"] == "destroyed"


def test_a_write_into_a_removed_folder_fails(tmp_path: Path) -> None:
    """ManifestWriteNeedsFolder (R10)."""
    writer, path = _writer(tmp_path)
    path.parent.rmdir()
    with pytest.raises(FolderGone):
        writer.write(status=Status.RUNNING)
    assert not path.parent.exists()
