"""agent-tty destroy ID [--force]."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import typer

from agent_tty.cli.output import GLOBALS, emit

RERUN_ENV = "AGENT_TTY_DESTROY_RERUN"


def command(
    session_id: str = typer.Argument(..., metavar="ID", help="The session id."),
    force: bool = typer.Option(False, "--force", "-f", help="Kill the host and the program group without the host's help."),
) -> int:
    from agent_tty.lifecycle.destroy import destroy
    from agent_tty.lifecycle.engine import engine_for

    engine = engine_for(GLOBALS.home)
    paths = engine.home.session(session_id)
    if os.environ.get(RERUN_ENV) == "1":
        _leave_program_group(engine, paths)
    elif _runs_inside(engine, paths, session_id):
        return _rerun_in_new_session(session_id)
    outcome = destroy(engine, session_id, force)
    manifest = outcome.manifest
    result = {
        "sessionId": session_id,
        "destroyed": True,
        "alreadyDestroyed": outcome.already,
        "status": manifest.status.value if manifest else "destroyed",
        "exitCode": manifest.exit_code if manifest else None,
        "exitSignal": manifest.exit_signal if manifest else None,
    }
    human = f"{session_id} destroyed"
    if outcome.manifest_error:
        result["manifestUnreadable"] = outcome.manifest_error
        human += f"\nnote: its manifest cannot be read ({outcome.manifest_error}); the destroyed marker records the end"
    if outcome.group_unchecked:
        result["groupUnchecked"] = True
        result["warning"] = (
            f"the program's group was not checked ({outcome.group_unchecked}); "
            "a process the program left may still run"
        )
        human += f"\nwarning: {result['warning']}"
    emit(result, human)
    return 0


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


def _rerun_in_new_session(session_id: str) -> int:
    """Run this same destroy detached, in a new session, and exit with its exit code."""
    env = {k: v for k, v in os.environ.items() if k != "AGENT_TTY_SESSION_ID"}
    env[RERUN_ENV] = "1"
    from agent_tty.platform.system import current

    argv = list(GLOBALS.argv)
    if GLOBALS.resolved is not None:
        # The copy destroys the session this one resolved, not whatever the name means by then.
        at = len(argv) - 1 - argv[::-1].index(GLOBALS.resolved["ref"])
        argv[at] = session_id
    child = subprocess.Popen([sys.executable, "-m", "agent_tty", *argv], env=env, **current().detached())

    def forward(signum: int, _frame: object) -> None:
        child.send_signal(signum)

    # Forward what a user sends; not SIGHUP, which the end of the program's terminal sends
    # us while the copy does its work.
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, forward)
    code = child.wait()
    return 128 - code if code < 0 else code
