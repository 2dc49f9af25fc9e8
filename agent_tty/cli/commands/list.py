"""agent-tty list [--all]: sessions of the Home; reconciles the active ones it reads."""

from __future__ import annotations

import shlex

import typer

from agent_tty.cli.output import GLOBALS, emit, table


def command(all_: bool = typer.Option(False, "--all", "-a", help="Also show ended sessions.")) -> int:
    from agent_tty.cli.commands.view import age_text, summary
    from agent_tty.lifecycle.engine import engine_for
    from agent_tty.lifecycle.incomplete import incomplete
    from agent_tty.lifecycle.reconcile import reconcile
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode
    from agent_tty.protocol.status import is_active

    engine = engine_for(GLOBALS.home)
    sessions = []
    unreadable = []
    leftovers = []
    for session_id in engine.home.session_ids():
        paths = engine.home.session(session_id)
        try:
            found = incomplete(paths)
            if found is not None:
                if all_:
                    leftovers.append(found.summary())  # no manifest: a create or gc died half-way
                continue
            # Active sessions are checked for a dead host; ended ones only for a destroyed
            # marker beside another status (ReconcileRepairsMarked), which costs one stat.
            manifest = reconcile(engine, paths, engine.read_manifest(paths)).manifest
        except AgentTtyError as err:
            if err.code is ErrorCode.SESSION_NOT_FOUND:
                continue  # removed while we listed
            unreadable.append({"sessionId": session_id, "code": err.code.value, "message": err.message})
            continue
        except Exception as err:  # one broken session must not hide the others
            unreadable.append({"sessionId": session_id, "code": "INTERNAL_ERROR", "message": f"{type(err).__name__}: {err}"})
            continue
        if all_ or is_active(manifest.status):
            sessions.append(manifest)
    sessions.sort(key=lambda m: m.created_at)
    result = {"sessions": [summary(m) for m in sessions], "unreadable": unreadable, "incomplete": leftovers}
    rows = [
        [m.session_id, m.status.value, str(m.child_pid or "-"), age_text(m.created_at), m.name or "", shlex.join(m.argv)]
        for m in sessions
    ]
    human = table(rows, ["ID", "STATUS", "PID", "AGE", "NAME", "COMMAND"]) if rows else "no sessions"
    for problem in unreadable:
        human += f"\n{problem['sessionId']}: unreadable: {problem['message']}"
    for leftover in leftovers:
        human += f"\n{leftover['sessionId']}: incomplete (no session.json), changed {leftover['ageSeconds']:.0f} s ago (gc removes it once nothing of it runs)"
    emit(result, human)
    return 0
