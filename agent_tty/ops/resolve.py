"""Names of sessions: what a name or an id prefix refers to, and a name a new session may take."""

from __future__ import annotations

from agent_tty.ops.names import CLI, Names


def check_name_is_free(engine, name: str, names: Names = CLI) -> None:  # type: ignore[no-untyped-def]
    """`create --name`: refuse a name a live session has, or one that is another session's id
    (commands resolve an id first). Without a lock two creates racing with one name can both
    pass; a command naming that session then refuses the ambiguity, never picks one."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode, invalid
    from agent_tty.protocol.status import is_active

    if not name.strip() or any(ord(ch) < 32 or ord(ch) == 127 for ch in name) or len(name) > 128:
        raise invalid(f"invalid {names.of('name')} {name!r}: 1-128 printable characters", value=name)
    ids = engine.home.session_ids()
    if name in ids:
        raise invalid(f"invalid {names.of('name')} {name!r}: it is another session's id", value=name)
    for session_id in ids:
        try:
            manifest = engine.read_manifest(engine.home.session(session_id))
        except AgentTtyError as err:
            if err.code in (ErrorCode.SESSION_NOT_FOUND, ErrorCode.STORAGE_ERROR, ErrorCode.INVALID_INPUT):
                continue
            raise
        if manifest.name == name and is_active(manifest.status):
            raise invalid(
                f"a live session is already named {name!r} ({session_id}): destroy it or choose another name",
                value=name,
                sessionId=session_id,
            )


def by_name_or_prefix(engine, ref: str, looks_like_id: bool, ids: list[str]) -> tuple[str | None, str]:  # type: ignore[no-untyped-def]
    """The one session of `ids` (the Home's) that `ref` names (`create --name`), else the one
    whose id it begins (when it could be an id): (id, "name" | "prefix"), or (None, "") for none. More than one is refused.
    Only reads; every later step works on the id with its own checks."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode, invalid
    from agent_tty.protocol.status import is_active

    named_active: list[str] = []
    named_ended: list[str] = []
    prefixed: list[str] = []
    for session_id in ids:
        if looks_like_id and session_id.startswith(ref):
            prefixed.append(session_id)
        try:
            manifest = engine.read_manifest(engine.home.session(session_id))
        except AgentTtyError as err:
            if err.code in (ErrorCode.SESSION_NOT_FOUND, ErrorCode.STORAGE_ERROR, ErrorCode.INVALID_INPUT):
                continue  # removed meanwhile, half-created or unreadable: it has no name to match
            raise
        if manifest.name == ref:
            (named_active if is_active(manifest.status) else named_ended).append(session_id)
    # A name that also begins another session's id names two sessions: refused, never a pick
    # (`destroy ab` must not end the session whose id begins "ab" for the one named "ab").
    named = named_active or named_ended
    others = [session_id for session_id in prefixed if session_id not in named]
    if named and others:
        raise invalid(
            f"{ref!r} is the name of {', '.join(named)} and begins the id of {', '.join(others)}: give the id",
            ref=ref,
            matches=[*named, *others],
        )
    # A live session's name wins over ended ones that had it; among equals it must be unique.
    for found, by in ((named_active, "name"), (named_ended, "name"), (prefixed, "prefix")):
        if len(found) == 1:
            return found[0], by
        if len(found) > 1:
            raise invalid(
                f"{ref!r} matches {len(found)} sessions by {by} ({', '.join(found)}): give the id",
                ref=ref,
                matches=found,
            )
    return None, ""
