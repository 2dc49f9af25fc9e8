"""Names of sessions: a name a new session may take."""

from __future__ import annotations


def check_name_is_free(engine, name: str) -> None:  # type: ignore[no-untyped-def]
    """`create --name`: refuse a name a live session has, or one that is another session's id
    (commands resolve an id first). Without a lock two creates racing with one name can both
    pass; a command naming that session then refuses the ambiguity, never picks one."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode, invalid
    from agent_tty.protocol.status import is_active

    if not name.strip() or any(ord(ch) < 32 or ord(ch) == 127 for ch in name) or len(name) > 128:
        raise invalid(f"invalid --name {name!r}: 1-128 printable characters", value=name)
    ids = engine.home.session_ids()
    if name in ids:
        raise invalid(f"invalid --name {name!r}: it is another session's id", value=name)
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
