"""Session folders without a manifest: what a create or a gc killed half-way leaves behind.

A create SIGKILLed before its first manifest write, or a gc SIGKILLed inside its rmtree, leaves
sessions/<id>/ with no session.json. No command could see such a folder, and gc kept it for
ever. list shows it as incomplete, with its age; gc removes it once nothing of it can run: no
host that host.json proves alive (or cannot judge), no group that program.json proves (or
cannot judge), and no change for INCOMPLETE_GRACE_S, so a create still between its mkdir and
its first writes keeps its folder (R1).
"""

from __future__ import annotations

import os
import time

from agent_tty.frozen import Frozen
from agent_tty.lifecycle.engine import Engine
from agent_tty.protocol.errors import AgentTtyError, not_found
from agent_tty.storage.files import exists, read_optional
from agent_tty.storage.home import SessionPaths
from agent_tty.storage.records import HostRecord
from agent_tty.storage.trust import check_session_folder

INCOMPLETE_GRACE_S = 60.0
"""A create writes host.json and the manifest within milliseconds of its mkdir; a folder that
has not changed for a minute with neither is no create's any more."""


class Incomplete(Frozen):
    __slots__ = ("session_id", "age_s")
    session_id: str
    age_s: float

    def summary(self) -> dict[str, object]:
        return {"sessionId": self.session_id, "status": "incomplete", "ageSeconds": round(self.age_s, 3)}


def incomplete(paths: SessionPaths) -> Incomplete | None:
    """The folder when it has no manifest; None when it has one; SESSION_NOT_FOUND when gone."""
    if exists(paths.manifest):
        return None
    check_session_folder(paths.folder)
    try:
        changed = os.lstat(paths.folder).st_mtime
    except FileNotFoundError:
        raise not_found(paths.session_id) from None
    return Incomplete(paths.session_id, max(0.0, time.time() - changed))


def why_kept(engine: Engine, paths: SessionPaths, found: Incomplete) -> str | None:
    """Why gc must keep an incomplete folder; None once nothing of it can run."""
    if found.age_s < INCOMPLETE_GRACE_S:
        return f"incomplete (no session.json), changed {found.age_s:.0f} s ago: a create may still be writing it"
    return what_runs(engine, paths, "incomplete")


def what_runs(engine: Engine, paths: SessionPaths, what: str) -> str | None:
    """What of a session without a usable manifest may still run, judged through host.json and
    program.json alone; None once neither proves (or fails to judge) anything alive."""
    try:
        host = read_optional(paths.host, HostRecord)
    except AgentTtyError as err:
        return f"{what}, and its host.json cannot be checked: {err.message}"
    if host is not None:
        verdict = engine.platform.judge_host(host.mechanism, host.pid, host.identity).value
        if verdict != "dead":
            return f"{what}, but its host (pid {host.pid}) reads {verdict}"
    group = engine.group(paths)  # an unreadable program.json raises: gc says why it keeps it
    if group is not None:
        verdict = engine.platform.judge_group(group).value
        if verdict in ("owned", "unknown", "unshared", "ambiguous") or engine.platform.group_alive(group):
            return f"{what}, but its program's group reads {verdict}"
    return None
