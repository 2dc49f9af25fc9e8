"""A session named on the command line: its id, its name (`create --name`), or a unique prefix of
its id, in that order (Docker's order). The result says what matched.

Resolution only reads, and what it returns is an id: every later step of the command works on
that id with its own checks, so a session renamed, ended or replaced meanwhile is never mistaken
for another. A full id costs one stat; a name or a prefix reads the Home's manifests, through the
engine, after the Home's trust check.
"""

from __future__ import annotations

from agent_tty.cli.output import GLOBALS


def resolve_arguments(values: dict[str, object]) -> dict[str, object]:
    """A command's parsed arguments with its `session_id` (an id, a name or an id prefix)
    resolved to an id: the one step both parsers (cli/fastparse.py and click's callback in
    cli/parse.py) take after reading argv."""
    ref = values.get("session_id")
    if isinstance(ref, str):
        values["session_id"] = resolve_session(ref)
    return values


def resolve_session(ref: str) -> str:
    """The id `ref` names; records in GLOBALS.resolved how it matched when it was not the id.

    A ref that matches nothing is returned as it is: the command checks its other arguments
    first (a bad signal is exit 2 before a missing session is exit 3), then fails on it as on
    any unknown id. Only an ambiguous ref is refused here.
    """
    from agent_tty.storage.home import SESSION_ID_RE, Home, resolve_home

    looks_like_id = SESSION_ID_RE.fullmatch(ref) is not None
    if looks_like_id and Home(resolve_home(GLOBALS.home)).has_session(ref):
        return ref
    session_id, by = _by_name_or_prefix(ref, looks_like_id)
    if session_id is None:
        return ref
    GLOBALS.resolved = {"ref": ref, "by": by, "sessionId": session_id}
    return session_id


def _by_name_or_prefix(ref: str, looks_like_id: bool) -> tuple[str | None, str]:
    from agent_tty.lifecycle.engine import engine_for
    from agent_tty.ops.resolve import by_name_or_prefix
    from agent_tty.protocol.errors import AgentTtyError

    try:
        engine = engine_for(GLOBALS.home)
        ids = engine.home.session_ids()
    except AgentTtyError:
        return None, ""  # an unsafe or unreadable Home: the command reports it in its own words
    return by_name_or_prefix(engine, ref, looks_like_id, ids)
