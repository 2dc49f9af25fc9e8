"""The dashboard's state and its terminal: raw mode, the alternate screen, keys and resizes.

It only reads: the session list comes from the manifests as they are on disk (list's
reconcile would write a dead host's session down, so it is not called here), the mirror from
the event log (follow.py). No socket is opened. The terminal is restored on every way out:
q, the end of stdin, an exception, SIGTERM and SIGHUP.
"""

from __future__ import annotations

import os
import time

from agent_tty.dashboard.follow import Mirror
from agent_tty.dashboard.frame import REVERSE, Entry, Row, View, frame, plain
from agent_tty.protocol.errors import AgentTtyError

LIST_EVERY_S = 1.0
"""How often the session list (and the ages in it) is read again."""
BUSY_POLL_S = 0.03
IDLE_POLL_S = 0.25
IDLE_AFTER_S = 2.0
"""A mirror that has not changed for this long is polled at IDLE_POLL_S: cheap when idle."""

ENTER = b"\x1b[?1049h\x1b[?25l\x1b[?7l\x1b[H\x1b[2J"
"""The alternate screen, no cursor, no autowrap (a frame's last cell never scrolls it)."""
LEAVE = b"\x1b[0m\x1b[?7h\x1b[?25h\x1b[?1049l"


class Dashboard:
    """The sessions, the selection, the search and the mirror of the selected session."""

    def __init__(self, engine, all_: bool = False, select: str | None = None, backend: str | None = None) -> None:  # type: ignore[no-untyped-def]
        self.engine = engine
        self.all_ = all_
        self.backend = backend
        # Inside a session of this Home (a split beside an agent, or a test), its own session
        # is left out: mirroring itself would redraw for ever.
        self.own = os.environ.get("AGENT_TTY_SESSION_ID")
        self.sessions: list[Entry] = []
        self.query = ""
        self.searching = False
        self.paused = False
        self.selected_id: str | None = None
        self.mirror: Mirror | None = None
        self.mirror_id: str | None = None
        self.refresh()
        if select is not None:
            chosen = [e for e in self.sessions if select in (e.session_id, e.name)]
            if not chosen:
                chosen = [e for e in self.sessions if e.session_id.startswith(select)]
            if len(chosen) != 1:
                from agent_tty.protocol.errors import invalid

                known = ", ".join(e.label for e in self.sessions) or "none"
                raise invalid(f"--select {select!r} names no one session shown here (sessions: {known})", value=select)
            self.selected_id = chosen[0].session_id
        self._follow_selection()

    # ------------------------------------------------------------ the list

    def refresh(self) -> None:
        """Read the manifests again. The selected session stays listed while it exists, even
        once it ended (without --all)."""
        from agent_tty.protocol.status import is_active

        found = []
        for session_id in self._ids():
            if session_id == self.own:
                continue
            try:
                manifest = self.engine.read_manifest(self.engine.home.session(session_id))
            except (AgentTtyError, OSError, ValueError):
                continue  # being created or removed, or unreadable: `list` says which
            if not (self.all_ or is_active(manifest.status) or session_id == self.selected_id):
                continue
            found.append(manifest)
        found.sort(key=lambda m: m.created_at)
        from agent_tty.cli.commands.view import age_text

        self.sessions = [
            Entry(m.session_id, m.name, m.status.value, age_text(m.created_at), m.mechanism or "-") for m in found
        ]
        shown = self.shown()
        if shown and self.selected_id not in [e.session_id for e in shown]:
            self.selected_id = shown[0].session_id
        elif not shown:
            self.selected_id = None

    def _ids(self) -> list[str]:
        try:
            return self.engine.home.session_ids()
        except AgentTtyError:
            return []

    def shown(self) -> list[Entry]:
        if not self.query:
            return self.sessions
        return [e for e in self.sessions if e.matches(self.query)]

    def move(self, delta: int) -> None:
        shown = self.shown()
        if not shown:
            return
        ids = [e.session_id for e in shown]
        at = ids.index(self.selected_id) if self.selected_id in ids else 0
        self.selected_id = ids[max(0, min(len(ids) - 1, at + delta))]
        self._follow_selection()

    def set_query(self, query: str) -> None:
        self.query = query
        shown = self.shown()
        if shown and self.selected_id not in [e.session_id for e in shown]:
            self.selected_id = shown[0].session_id
        self._follow_selection()

    # ------------------------------------------------------------ the mirror

    def _follow_selection(self) -> None:
        if self.selected_id == self.mirror_id:
            return
        if self.mirror is not None:
            self.mirror.close()
        self.mirror, self.mirror_id = None, self.selected_id
        if self.selected_id is not None:
            self.mirror = Mirror(self.engine.home.session(self.selected_id).events, self.backend)

    def pump(self) -> bool:
        """Read what the selected log gained (nothing while paused); whether to redraw."""
        if self.paused or self.mirror is None:
            return False
        return self.mirror.poll()

    def caught_up(self) -> bool:
        return self.paused or self.mirror is None or self.mirror.caught_up()

    def catch_up(self) -> None:
        """Read the whole log as it is now (for --once)."""
        while self.mirror is not None and self.mirror.poll() and not self.mirror.caught_up():
            pass

    # ------------------------------------------------------------ keys

    def key(self, key: str) -> bool:
        """Apply one key; False to quit."""
        if key == "ctrl-c":
            return False
        if key in ("up", "down"):
            self.move(-1 if key == "up" else 1)
        elif self.searching:
            if key == "enter":
                self.searching = False
            elif key == "esc":
                self.searching = False
                self.set_query("")
            elif key == "backspace":
                self.set_query(self.query[:-1])
            elif len(key) == 1:
                self.set_query(self.query + key)
        elif key == "q":
            return False
        elif key == "j":
            self.move(1)
        elif key == "k":
            self.move(-1)
        elif key in ("home", "g"):
            self.move(-len(self.sessions))
        elif key in ("end", "G"):
            self.move(len(self.sessions))
        elif key == "/":
            self.searching = True
        elif key == "esc":
            self.set_query("")
        elif key == " ":
            self.paused = not self.paused
        return True

    # ------------------------------------------------------------ the frame

    def view(self) -> View:
        shown = self.shown()
        ids = [e.session_id for e in shown]
        view = View(
            home=str(self.engine.home.root),
            entries=shown,
            selected=ids.index(self.selected_id) if self.selected_id in ids else None,
            query=self.query,
            searching=self.searching,
            paused=self.paused,
        )
        mirror = self.mirror
        if mirror is not None:
            view.seq, view.exit, view.problem = mirror.seq, mirror.exit, mirror.problem
            if mirror.screen is not None:
                view.screen_lines = mirror.screen.lines()
                view.screen_size = mirror.screen.size
                view.cursor_row = mirror.screen.cursor()[1]
        return view

    def result(self, rows: list[Row], cols: int) -> dict[str, object]:
        view = self.view()
        return {
            "cols": cols,
            "rows": len(rows),
            "lines": plain(rows),
            "sessions": [e.session_id for e in view.entries],
            "selected": self.selected_id,
            "seq": view.seq,
            "paused": self.paused,
        }

    def close(self) -> None:
        if self.mirror is not None:
            self.mirror.close()


# ---------------------------------------------------------------- keys from bytes

_SEQUENCES = {
    b"\x1b[A": "up", b"\x1bOA": "up", b"\x1b[B": "down", b"\x1bOB": "down",
    b"\x1b[H": "home", b"\x1bOH": "home", b"\x1b[1~": "home", b"\x1b[F": "end", b"\x1bOF": "end", b"\x1b[4~": "end",
}


def keys(data: bytes) -> list[str]:
    """The keys a read from a raw terminal holds. An escape sequence we do not use is skipped
    whole; an ESC with nothing after it is the Escape key."""
    out: list[str] = []
    i = 0
    while i < len(data):
        byte = data[i]
        if byte == 0x1B:
            end = _escape_end(data, i)
            if end == i + 1:
                out.append("esc")
            else:
                name = _SEQUENCES.get(data[i:end])
                if name:
                    out.append(name)
            i = end
            continue
        if byte in (0x0D, 0x0A):
            out.append("enter")
        elif byte in (0x7F, 0x08):
            out.append("backspace")
        elif byte == 0x03:
            out.append("ctrl-c")
        elif byte >= 0x20:
            length = 1 if byte < 0x80 else 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            char = data[i : i + length].decode("utf-8", "replace")
            out.append(char if char.isprintable() else "")
            i += length
            continue
        i += 1
    return [k for k in out if k]


def _escape_end(data: bytes, i: int) -> int:
    if i + 1 >= len(data):
        return i + 1
    lead = data[i + 1]
    if lead == ord("["):
        j = i + 2
        while j < len(data) and not 0x40 <= data[j] <= 0x7E:
            j += 1
        return min(j + 1, len(data))
    if lead == ord("O"):
        return min(i + 3, len(data))
    if lead == 0x1B:
        return i + 1  # ESC ESC: the first is Escape
    return i + 2  # Alt+key: skipped


# ---------------------------------------------------------------- drawing

def render_row(row: Row) -> str:
    out = []
    for text, style in row:
        out.append(f"\x1b[7m{text}\x1b[0m" if style == REVERSE else text)
    return "".join(out)


class _Stop(Exception):
    """A signal that ends the dashboard (SIGTERM, SIGHUP): unwinds through the restore."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def run_terminal(dashboard: Dashboard, fd_in: int = 0, fd_out: int = 1) -> tuple[int, dict[str, object]]:
    """Show the dashboard until q; the exit status and the last frame's result."""
    import select
    import signal

    try:
        import termios
    except ImportError:  # Windows: no termios; the console API would be another backend
        from agent_tty.protocol.errors import ErrorCode

        raise AgentTtyError(ErrorCode.USAGE, "the live dashboard needs a POSIX terminal; `dashboard --once` prints a frame") from None

    saved = termios.tcgetattr(fd_in)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)

    def stop(signum: int, _frame: object) -> None:
        raise _Stop(128 + signum)

    handled = (signal.SIGWINCH, signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.getsignal(sig) for sig in handled}
    old_wakeup = signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGWINCH, lambda *_: None)  # the wakeup fd ends the select: redraw
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    drawn: list[str] = []
    rows: list[Row] = []
    size = (0, 0)
    code = 0
    try:
        raw = termios.tcgetattr(fd_in)
        raw[0] &= ~(termios.BRKINT | termios.ICRNL | termios.INPCK | termios.ISTRIP | termios.IXON)
        raw[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN | termios.ISIG)
        raw[6][termios.VMIN], raw[6][termios.VTIME] = 1, 0
        termios.tcsetattr(fd_in, termios.TCSAFLUSH, raw)
        _write(fd_out, ENTER)
        changed_at = time.monotonic()
        listed_at = changed_at
        dirty = True
        while True:
            now_size = _size(fd_out)
            if now_size != size:
                size, drawn, dirty = now_size, [], True
                _write(fd_out, b"\x1b[2J")
            if dirty:
                rows = frame(dashboard.view(), *size)
                drawn = _draw(fd_out, rows, drawn)
                dirty = False
            now = time.monotonic()
            if not dashboard.caught_up():
                timeout = 0.0
            else:
                timeout = BUSY_POLL_S if now - changed_at < IDLE_AFTER_S else IDLE_POLL_S
            ready, _, _ = select.select([fd_in, wake_r], [], [], max(0.0, min(timeout, listed_at + LIST_EVERY_S - now)))
            if wake_r in ready:
                _drain(wake_r)
            if fd_in in ready:
                try:
                    data = os.read(fd_in, 4096)
                except OSError:
                    data = b""
                if not data:
                    break  # the terminal went away
                if not all(dashboard.key(k) for k in keys(data)):
                    break
                dirty = True
            if dashboard.pump():
                dirty = True
                changed_at = time.monotonic()
            if time.monotonic() - listed_at >= LIST_EVERY_S:
                dashboard.refresh()
                dashboard._follow_selection()
                listed_at, dirty = time.monotonic(), True
    except _Stop as stopped:
        code = stopped.code
    finally:
        try:
            _write(fd_out, LEAVE)
        except OSError:
            pass
        try:
            termios.tcsetattr(fd_in, termios.TCSADRAIN, saved)
        except termios.error:
            pass
        signal.set_wakeup_fd(old_wakeup)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        os.close(wake_r)
        os.close(wake_w)
        dashboard.close()
    return code, dashboard.result(rows, size[0])


def _size(fd: int) -> tuple[int, int]:
    try:
        got = os.get_terminal_size(fd)
        return got.columns, got.lines
    except OSError:
        return 80, 24


def _draw(fd: int, rows: list[Row], drawn: list[str]) -> list[str]:
    """Write the rows that differ from what the terminal shows."""
    rendered = [render_row(row) for row in rows]
    out = []
    for index, text in enumerate(rendered):
        if index < len(drawn) and drawn[index] == text:
            continue
        out.append(f"\x1b[{index + 1};1H{text}")
    if out:
        _write(fd, "".join(out).encode("utf-8", "replace"))
    return rendered


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except (BlockingIOError, OSError):
        pass
