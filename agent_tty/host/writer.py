"""The host's one writer of session.json (HostSerializesWrites, HostStopsAfterTerminalWrite)."""

from __future__ import annotations

import time
from typing import Any

from agent_tty.protocol.status import is_terminal
from agent_tty.storage.files import write_record
from agent_tty.storage.home import SessionPaths
from agent_tty.storage.records import Manifest


class ManifestWriter:
    """Every host write of the manifest goes through `write`, in call order.

    The host is single-threaded and each write is synchronous, so a write's snapshot is the
    state at its turn and writes land in call order. Once a terminal record is written the
    writer refuses every later write: the terminal record is the host's last write, so gc
    may remove the folder right after it (R7).
    """

    def __init__(self, paths: SessionPaths, manifest: Manifest) -> None:
        self._paths = paths
        self.current = manifest
        self.closed = False

    def write(self, **changes: Any) -> bool:
        """Apply `changes` and write; False when a terminal record was written before.

        Raises FolderGone when gc removed the folder (ManifestWriteNeedsFolder).
        """
        if self.closed:
            return False
        record = self.current.replace(updated_at=time.time(), **changes)
        write_record(self._paths.manifest, record)
        self.current = record
        if is_terminal(record.status):
            self.closed = True
        return True
