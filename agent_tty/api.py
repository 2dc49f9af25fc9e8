"""The Python API: sessions driven from a program, with the CLI's semantics, errors and guards.

    from agent_tty.api import Client

    client = Client()                      # the default Home, or Client(home="/path")
    with client.create(["bash"]) as session:
        session.run("make test", timeout=120)
        print(session.snapshot()["lines"])

Every method calls the same operation as its command (agent_tty.ops) and returns the same
result as the command's `--json` `result`; errors are AgentTtyError with the contract's code
(`err.code`, `err.details`). Nothing another process may change is cached: each call checks the
Home and reads the session's records again, as a command does.
"""

from __future__ import annotations

import os
from typing import Any, Self

from agent_tty.protocol.errors import AgentTtyError, ErrorCode

__all__ = ["AgentTtyError", "Client", "ErrorCode", "Session"]


def _ms(seconds: float | None, what: str = "timeout") -> int | None:
    """A time-out in seconds (None or 0: no limit) as the operations' milliseconds."""
    from agent_tty.protocol.values import timeout_seconds_ms

    return timeout_seconds_ms(seconds, what)


def _duration_ms(seconds: float, what: str) -> int:
    from agent_tty.protocol.values import seconds_ms

    return seconds_ms(seconds, what)


def _positive_ms(value: float | None, what: str) -> int | None:
    """A duration in milliseconds (`screen_stable_ms`, `idle_ms`): more than 0, at most a year,
    rounded up to a whole millisecond as the CLI rounds `--screen-stable-ms 0.5`."""
    from agent_tty.protocol.values import positive_ms

    return None if value is None else positive_ms(value, what)


def _old_seconds(old: str, seconds: float | None, new: str, ms: float | None) -> int | None:
    """`new` (milliseconds), or the deprecated `old` keyword (seconds) it replaced (ADR 0028)."""
    if seconds is None:
        return _positive_ms(ms, new)
    import warnings

    warnings.warn(f"wait({old}=SECONDS) is deprecated: use {new}= (milliseconds)", DeprecationWarning, stacklevel=3)
    if ms is not None:
        from agent_tty.protocol.errors import invalid

        raise invalid(f"give {new} or {old} (deprecated), not both")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        from agent_tty.protocol.errors import invalid

        raise invalid(f"invalid {old} {seconds!r}: seconds, more than 0 (use {new}, milliseconds)", value=repr(seconds))
    return max(1, _duration_ms(seconds, old))


class Client:
    """A Home's sessions (`home` None: $AGENT_TTY_HOME or the default, as the CLI), fixed when
    the Client is made: a later chdir or change of $AGENT_TTY_HOME does not move it.

    After os.fork() (multiprocessing), the child's copy keeps no connection and no spare of the
    parent's: each process opens its own.

    A live session's host connection is kept open between calls (nothing else is kept).
    With `spare_host` (the default), each create starts a spare host for the next one, so a
    create after the first does not wait for a new interpreter (agent_tty/lifecycle/standby.py).
    `close()` (or leaving a `with Client() as client:` block) ends the spare; so does the end of
    this process. Sessions are not ended by either: destroy them, or use Session as a context.
    """

    def __init__(self, home: str | os.PathLike[str] | None = None, *, spare_host: bool = True) -> None:
        import threading

        from agent_tty.protocol.rpc import ConnectionPool

        from agent_tty.storage.home import resolve_home

        # Resolved once: a relative Home (or $AGENT_TTY_HOME) stays the same Home after a chdir.
        self.home = str(resolve_home(os.fspath(home) if home is not None else None))
        self._spare_host = spare_host
        self._spare = None
        self._spare_lock = threading.Lock()  # threads share a Client (the MCP server's workers)
        self._connections = ConnectionPool()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the spare host, if one waits (it has no session), and close kept connections
        (a later call opens what it needs again)."""
        with self._spare_lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            spare.close()
        self._connections.close()

    def _engine(self):  # type: ignore[no-untyped-def]
        from agent_tty.lifecycle.engine import engine_for

        engine = engine_for(self.home)  # the Home's trust check, every call
        engine.connections = self._connections  # connections only: every rule reads its records again
        return engine

    def create(
        self,
        argv: list[str],
        *,
        name: str | None = None,
        cols: int = 80,
        rows: int = 24,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        term: str = "xterm-256color",
        idle_timeout: float | None = None,
    ) -> Session:
        from agent_tty.ops import sessions
        from agent_tty.ops.names import PYTHON

        engine = self._engine()
        spare = self._spare_for(str(engine.home.root)) if self._spare_host else None
        result = sessions.create(
            engine,
            list(argv),
            name=name,
            cols=cols,
            rows=rows,
            cwd=cwd,
            env=env,
            term=term,
            idle_timeout_ms=_ms(idle_timeout, "idle_timeout"),
            launch=spare.launch if spare is not None else None,
            names=PYTHON,
        )
        if spare is not None:
            spare.refill()
        return Session(self, result["sessionId"], result)

    def warm_up(self, wait: float = 0.0) -> bool:
        """Start the spare host now, so that even the first create finds it ready; wait up to
        `wait` seconds for it to be warm. Whether it is."""
        spare = self._spare_for(str(self._engine().home.root))
        spare.refill()
        return spare.wait_ready(wait)

    def _spare_for(self, home: str):  # type: ignore[no-untyped-def]
        from agent_tty.lifecycle.standby import SpareHost

        with self._spare_lock:
            stale = None
            if self._spare is None or self._spare.home != home:
                stale, self._spare = self._spare, SpareHost(home)
            spare = self._spare
        if stale is not None:
            stale.close()
        return spare

    def session(self, session_id: str) -> Session:
        """A handle on an existing session by its id (nothing is checked until a call)."""
        return Session(self, session_id, None)

    def find(self, ref: str) -> Session:
        """A handle on the session `ref` names as the CLI resolves it: its id, its name (a live
        session's first), or a unique prefix of its id. The handle keeps the id it resolved to,
        so a name given to another session later never redirects it. SESSION_NOT_FOUND when
        nothing matches; INVALID_INPUT when several do."""
        from agent_tty.ops.resolve import by_name_or_prefix
        from agent_tty.protocol.errors import not_found
        from agent_tty.storage.home import SESSION_ID_RE

        engine = self._engine()
        looks_like_id = SESSION_ID_RE.fullmatch(ref) is not None
        if looks_like_id and engine.home.has_session(ref):
            return Session(self, ref, None)
        session_id, _by = by_name_or_prefix(engine, ref, looks_like_id, engine.home.session_ids())
        if session_id is None:
            raise not_found(ref)
        return Session(self, session_id, None)

    def list(self, all: bool = False) -> dict[str, Any]:  # noqa: A002 - the CLI's --all
        from agent_tty.ops.sessions import list_sessions

        return list_sessions(self._engine(), all)[0]

    def gc(self, dry_run: bool = False, older_than: float | None = None, stale_only: bool = False) -> dict[str, Any]:
        """Remove ended sessions' folders (`older_than`: seconds since they ended)."""
        from agent_tty.ops.sessions import gc

        if older_than is not None:
            _duration_ms(older_than, "older_than")
        return gc(self._engine(), dry_run, older_than, stale_only)

    def doctor(self) -> dict[str, Any]:
        """What works on this machine (`doctor --json`'s result; it does not refuse an unsafe
        Home, it reports it)."""
        from agent_tty.ops.doctor import doctor

        return doctor(self.home)


class Session:
    """One session of a Client's Home. Used as a context manager it is destroyed on exit."""

    def __init__(self, client: Client, session_id: str, created: dict[str, Any] | None) -> None:
        self.client = client
        self.id = session_id
        self.created = created
        """`create`'s result when this handle came from Client.create."""

    def __repr__(self) -> str:
        return f"Session({self.id!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.destroy()

    # ------------------------------------------------------------------ driving

    def run(self, command: str, timeout: float | None = 30.0, wait: bool = True) -> dict[str, Any]:
        from agent_tty.ops import drive

        return drive.run(self.client._engine(), self.id, command, _ms(timeout), wait)

    def type(self, text: str) -> dict[str, Any]:
        from agent_tty.ops import drive

        return drive.type_text(self.client._engine(), self.id, text)

    def paste(self, text: str) -> dict[str, Any]:
        from agent_tty.ops import drive

        return drive.paste(self.client._engine(), self.id, text)

    def send_keys(self, *keys: str) -> dict[str, Any]:
        from agent_tty.ops import drive

        return drive.send_keys(self.client._engine(), self.id, list(keys))

    def mark(self, label: str) -> dict[str, Any]:
        from agent_tty.ops import drive

        return drive.mark(self.client._engine(), self.id, label)

    def resize(self, cols: int, rows: int) -> dict[str, Any]:
        from agent_tty.ops import drive

        return drive.resize(self.client._engine(), self.id, cols, rows)

    def signal(self, name: str) -> dict[str, Any]:
        from agent_tty.ops import drive

        return drive.signal(self.client._engine(), self.id, name)

    # ------------------------------------------------------------------ observing

    def wait(
        self,
        text: str | None = None,
        *,
        regex: str | None = None,
        screen_stable_ms: float | None = None,
        idle_ms: float | None = None,
        exit: bool = False,  # noqa: A002 - the CLI's --exit
        after_seq: int | str | None = None,
        timeout: float | None = 30.0,
        output: bool = False,
        stable: float | None = None,
        idle: float | None = None,
    ) -> dict[str, Any]:
        """As `wait`: `screen_stable_ms` and `idle_ms` in milliseconds, `timeout` in seconds, as
        the CLI's `--screen-stable-ms`, `--idle-ms` and `--timeout` (ADR 0028); `timedOut` in
        the result rather than an exception; SESSION_NOT_RUNNING when the session ended first.
        `stable` and `idle` (seconds) are the old names, deprecated."""
        from agent_tty.ops import observe
        from agent_tty.ops.names import PYTHON

        stable_ms = _old_seconds("stable", stable, "screen_stable_ms", screen_stable_ms)
        quiet_ms = _old_seconds("idle", idle, "idle_ms", idle_ms)
        return observe.wait(
            self.client._engine(),
            self.id,
            text=text,
            regex=regex,
            stable_ms=stable_ms,
            idle_ms=quiet_ms,
            exit=exit,
            after_seq=after_seq,
            timeout_ms=_ms(timeout),
            output=output,
            names=PYTHON,
        )

    def batch(self, steps: list[dict[str, Any]] | str, keep_going: bool = False) -> dict[str, Any]:
        """As `batch --json`: `steps` (a list of step objects, or its JSON text) are all checked
        first (INVALID_INPUT or USAGE naming the step, nothing sent), then run in order, each
        wait anchored at the input step before it; the result has a record per step, and its
        `exitCode` is the CLI's (0, or the first failed step's). A KeyboardInterrupt goes on with
        the records so far as its `.batch` (the step in flight `interrupted`)."""
        from agent_tty.ops import batch

        plan = batch.check_steps(batch.parse_steps(steps) if isinstance(steps, str) else steps)
        return batch.run_batch(self.client._engine(), self.id, plan, keep_going)

    def snapshot(self, structured: bool = False, scrollback: bool = False, *, max_cells: int | None = None) -> dict[str, Any]:
        """As `snapshot --json` (`structured`: `--format structured`). `max_cells`: a structured
        snapshot of a screen with more cells (cols x rows) is INVALID_INPUT (`details.limit`,
        `details.cells`), refused before the host reads a cell; the MCP server passes 20,000."""
        from agent_tty.ops import observe

        return observe.snapshot(self.client._engine(), self.id, structured, scrollback, max_cells)

    def inspect(self) -> dict[str, Any]:
        from agent_tty.ops.sessions import inspect

        return inspect(self.client._engine(), self.id)

    # ------------------------------------------------------------------ the end

    def destroy(self, force: bool = False) -> dict[str, Any]:
        """Plain: the host ends the program; `force`: end what can be proven the session's
        without the host. Called from inside the session's own program, it runs detached (as
        the CLI's destroy does) so it does not die in its own kill."""
        from agent_tty.ops.destroy import destroy

        return destroy(self.client._engine(), self.id, force)

    # ------------------------------------------------------------------ artifacts

    def screenshot(self, out: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """A PNG of the screen, saved under the session's artifacts (`path`), also copied to `out`."""
        from agent_tty.ops.artifacts import screenshot

        return screenshot(self.client._engine(), self.id, None if out is None else os.fspath(out))

    def export(  # noqa: A002
        self,
        format: str = "asciicast",
        out: str | os.PathLike[str] | None = None,
        *,
        speed: float | None = None,
        max_idle: float | None = None,
        fps: int | None = None,
    ) -> dict[str, Any]:
        """`record export`: the event log as an asciinema v2 file, or a video (`webm`, `mp4`,
        `gif`) at `speed`, pauses capped at `max_idle` seconds, sampled at `fps`."""
        from agent_tty.ops.artifacts import export
        from agent_tty.ops.names import PYTHON

        target = None if out is None else os.fspath(out)
        return export(self.client._engine(), self.id, format, target, PYTHON, speed=speed, max_idle=max_idle, fps=fps)
