"""destroy: end a session, from outside the program (ReRunsInNewSession) and through the host."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_tty.lifecycle.engine import Engine

RERUN_ENV = "AGENT_TTY_DESTROY_RERUN"


Rerun = Callable[[str, bool], dict[str, Any]]
"""Runs a destroy from inside the program as a detached copy (session id, force): its result."""


def destroy(engine: Engine, session_id: str, force: bool = False, rerun: Rerun | None = None) -> dict[str, Any]:
    """`rerun`: how a destroy from inside the program runs detached (the CLI's copy prints its
    own answer; the default returns the copy's result to the caller)."""
    from agent_tty.lifecycle.destroy import destroy as destroy_session

    paths = engine.home.session(session_id)
    if os.environ.get(RERUN_ENV) == "1":
        _leave_program_group(engine, paths)
    elif _runs_inside(engine, paths, session_id):
        if rerun is not None:
            return rerun(session_id, force)
        return _rerun_in_new_session(engine, session_id, force)
    outcome = destroy_session(engine, session_id, force)
    manifest = outcome.manifest
    result: dict[str, Any] = {
        "sessionId": session_id,
        "destroyed": True,
        "alreadyDestroyed": outcome.already,
        "status": manifest.status.value if manifest else "destroyed",
        "exitCode": manifest.exit_code if manifest else None,
        "exitSignal": manifest.exit_signal if manifest else None,
    }
    if outcome.manifest_error:
        result["manifestUnreadable"] = outcome.manifest_error
    if outcome.group_unchecked:
        result["groupUnchecked"] = True
        result["warning"] = (
            f"the program's group was not checked ({outcome.group_unchecked}); "
            "a process the program left may still run"
        )
    return result


def _runs_inside(engine, paths, session_id: str) -> bool:  # type: ignore[no-untyped-def]
    """ReRunsInNewSession: a destroy the program runs would die in its own kill."""
    # InsideCheckReadsEnv: before the host's start-up write no manifest names the program.
    if os.environ.get("AGENT_TTY_SESSION_ID") == session_id:
        return True
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    try:
        manifest = engine.read_manifest(paths)
    except AgentTtyError as err:
        if err.code is not ErrorCode.STORAGE_ERROR:
            raise
        group = engine.group(paths)  # an unreadable manifest: program.json names the program
        return group is not None and engine.platform.runs_inside(group.mechanism, group.pid, group.host_identity)
    if manifest.child_pid is None or manifest.mechanism is None:
        return False
    host = engine.host_record(paths)
    identity = host.identity if host is not None else None
    return engine.platform.runs_inside(manifest.mechanism, manifest.child_pid, identity)


def _leave_program_group(engine, paths) -> None:  # type: ignore[no-untyped-def]
    """The re-run copy has its own session already; a cgroup leaf it inherited is left here."""
    from agent_tty.protocol.errors import AgentTtyError

    try:
        mechanism = engine.read_manifest(paths).mechanism
        if mechanism is not None:
            engine.platform.leave_program_group(mechanism)
    except AgentTtyError:
        pass  # destroy itself reports what is wrong with the session


def rerun_env() -> dict[str, str]:
    """The detached copy's environment: it is not inside the session, and knows it is the copy."""
    env = {k: v for k, v in os.environ.items() if k != "AGENT_TTY_SESSION_ID"}
    env[RERUN_ENV] = "1"
    return env


def _rerun_in_new_session(engine, session_id: str, force: bool) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Run this destroy as a detached `agent-tty --json destroy` in a new session; its result is
    ours (if we are still there to read it: the caller is among what the copy ends)."""
    import json

    from agent_tty.platform.system import current
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    argv = [sys.executable, "-m", "agent_tty", "--json", "--home", str(engine.home.root), "destroy", session_id]
    child = subprocess.Popen(argv + (["--force"] if force else []), env=rerun_env(), stdout=subprocess.PIPE, text=True, **current().detached())
    out, _ = child.communicate()
    try:
        document = json.loads(out)
    except ValueError:
        raise AgentTtyError(ErrorCode.INTERNAL_ERROR, f"the detached destroy ended with {child.returncode} and no answer") from None
    if document.get("ok"):
        return document["result"]
    error = document.get("error") or {}
    try:
        code = ErrorCode(error.get("code"))
    except ValueError:
        code = ErrorCode.INTERNAL_ERROR
    raise AgentTtyError(code, str(error.get("message", "")), **(error.get("details") or {}))
