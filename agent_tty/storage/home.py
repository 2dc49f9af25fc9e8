"""Where a Home and its sessions live, and which session ids are valid."""

from __future__ import annotations

import os
import re
from pathlib import Path

from agent_tty.frozen import Frozen

from agent_tty.platform.system import current
from agent_tty.protocol.errors import AgentTtyError, ErrorCode, invalid

HOME_ENV = "AGENT_TTY_HOME"
SESSION_ID_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
_ID_LENGTH = 12  # 62 bits: collisions across Homes sharing a socket directory stay negligible

MANIFEST = "session.json"
HOST = "host.json"
PROGRAM = "program.json"
EVENTS = "events.jsonl"
DESTROYED_MARKER = "destroyed"
CREATE_FAILED_MARKER = "create-failed"


def resolve_home(option: str | None = None) -> Path:
    raw = option or os.environ.get(HOME_ENV) or os.path.join(os.path.expanduser("~"), ".agent-tty")
    return Path(os.path.abspath(raw))


def new_session_id() -> str:
    import secrets  # only create needs it: not on every command's start-up

    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(_ID_LENGTH))


def validate_session_id(value: str) -> str:
    """A session id is a name, never a path: `../x`, `/etc` and '' are refused (exit 2)."""
    if not isinstance(value, str) or not SESSION_ID_RE.fullmatch(value):
        raise invalid(
            f"invalid session id {value!r}: expected 1-64 of a-z, 0-9, '-', '_' (starting with a letter or digit)",
            sessionId=value,
        )
    return value


class SessionPaths(Frozen):
    __slots__ = ("session_id", "folder")
    session_id: str
    folder: Path

    @property
    def manifest(self) -> Path:
        return self.folder / MANIFEST

    @property
    def host(self) -> Path:
        return self.folder / HOST

    @property
    def program(self) -> Path:
        return self.folder / PROGRAM

    @property
    def events(self) -> Path:
        return self.folder / EVENTS

    @property
    def destroyed_marker(self) -> Path:
        return self.folder / DESTROYED_MARKER

    @property
    def create_failed_marker(self) -> Path:
        return self.folder / CREATE_FAILED_MARKER

    @property
    def artifacts(self) -> Path:
        return self.folder / "artifacts"


class Home(Frozen):
    __slots__ = ("root",)
    root: Path

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    def session(self, session_id: str) -> SessionPaths:
        return SessionPaths(validate_session_id(session_id), self.sessions / session_id)

    def has_session(self, session_id: str) -> bool:
        """Whether sessions/ID exists (one lstat; its trust is checked where it is used)."""
        try:
            os.lstat(self.sessions / session_id)
        except OSError:
            return False
        return True

    def session_ids(self) -> list[str]:
        """Ids of the session folders; names that are not valid ids are not sessions."""
        try:
            names = os.listdir(self.sessions)
        except FileNotFoundError:
            return []
        except OSError as err:
            raise AgentTtyError(
                ErrorCode.STORAGE_ERROR, f"cannot list {self.sessions}: {err.strerror}", path=str(self.sessions)
            ) from None
        return sorted(n for n in names if SESSION_ID_RE.fullmatch(n))

    def ensure(self) -> None:
        """Create the Home (0700) and check it. Only `create` calls this: no other write
        creates a folder."""
        from agent_tty.storage.trust import check_ancestors, check_home

        check_ancestors(str(self.root))
        for folder in (self.root, self.sessions):
            try:
                current().mkdir_private(str(folder))
            except FileExistsError:
                pass
            except OSError as err:
                raise AgentTtyError(
                    ErrorCode.STORAGE_ERROR, f"cannot create {folder}: {err.strerror}", path=str(folder)
                ) from None
        check_home(self.root)


SOCKET_NAME_ROOM = 1 + 64 + len(".sock")
"""What a socket's name adds to its folder's path: '/', a session id of up to 64, '.sock'."""
TMP_FALLBACKS = 8


def ensure_socket_dir(home: Path) -> Path:
    """A private folder of ours for the sessions' sockets, short enough for sun_path.

    $XDG_RUNTIME_DIR/agent-tty where the runtime folder is ours and private; else `run/` in
    the Home; else /tmp/agent-tty-<uid>. A folder in /tmp that someone else made first is
    passed over for another name, so squatting it denies nothing (ADR 0008)."""
    from agent_tty.storage.trust import UnsafeHome

    for folder, make in _socket_dir_candidates(home):
        try:
            if make:
                _mkdir_private(folder)
            check_socket_dir(folder)
            return folder
        except (UnsafeHome, OSError):
            continue
    import tempfile

    temp = current().temp_root()
    if temp is None:
        raise AgentTtyError(ErrorCode.STORAGE_ERROR, f"no private socket folder could be made for {home}", path=str(home))
    try:
        return Path(tempfile.mkdtemp(prefix=f"agent-tty-{current().user()}-", dir=temp))
    except OSError as err:
        raise AgentTtyError(ErrorCode.STORAGE_ERROR, f"cannot create a socket folder in {temp}: {err.strerror}") from None


def preview_socket_dir(home: Path) -> str:
    """Where create would put sockets, without creating anything (for doctor)."""
    from agent_tty.storage.trust import UnsafeHome

    for folder, _make in _socket_dir_candidates(home):
        try:
            check_socket_dir(folder)
            return str(folder)
        except FileNotFoundError:
            return f"{folder} (not created yet)"
        except (UnsafeHome, OSError):
            continue
    temp = current().temp_root()
    if temp is None:
        return "none: no private socket folder could be made"
    return f"{temp}/agent-tty-{current().user()}-XXXXXX (a new private folder)"


def _socket_dir_candidates(home: Path) -> list[tuple[Path, bool]]:
    candidates: list[tuple[Path, bool]] = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        try:
            from agent_tty.storage.trust import owned_folder

            owned_folder(runtime, os.lstat(runtime), "$XDG_RUNTIME_DIR", private=True)
            candidates.append((Path(runtime) / "agent-tty", True))
        except (AgentTtyError, OSError):
            pass
    candidates.append((home / "run", True))
    temp, user = current().temp_root(), current().user()
    if temp is not None:
        candidates.append((Path(f"{temp}/agent-tty-{user}"), True))
        candidates.extend((Path(f"{temp}/agent-tty-{user}-{n}"), True) for n in range(1, TMP_FALLBACKS))
    # A socket's path must fit sun_path: a long $XDG_RUNTIME_DIR or Home is passed over.
    return [(folder, make) for folder, make in candidates if socket_dir_fits(folder)]


def socket_dir_fits(folder: Path) -> bool:
    limit = current().socket_path_max  # None: a loopback host's address file has no such limit
    return limit is None or len(os.fsencode(str(folder))) + SOCKET_NAME_ROOM <= limit


def _mkdir_private(folder: Path) -> None:
    try:
        current().mkdir_private(str(folder))
    except FileExistsError:
        pass


def check_socket_dir(folder: Path, checked_home: Path | None = None) -> None:
    """A socket folder is ours, private, and nobody else can swap it or a folder above it.

    `checked_home`: a Home that passed check_home in this engine. A socket folder right inside
    it (`run/`) has above it the Home and the Home's ancestors, which that check covered (the
    Home itself more strictly than an ancestor: ours and writable by no one else), so their walk
    is not done again on every call; the folder itself always is. Any other folder's ancestors
    are walked, as always (docs/adr/0008)."""
    from agent_tty.storage.trust import check_ancestors, owned_folder

    text = str(folder)
    owned_folder(text, os.lstat(text), "the socket folder", private=True)
    if checked_home is not None and folder.parent == checked_home:
        return
    check_ancestors(text)


def socket_path_in(folder: Path, session_id: str) -> str:
    return str(folder / f"{session_id}.sock")


def trusted_socket_path(recorded: str, session_id: str, checked_home: Path | None = None) -> str:
    """The socket a manifest names, used only once it is `<socket folder of ours>/<id>.sock`:
    a record never makes us connect to, or unlink, a path outside our private folders.
    `checked_home`: as check_socket_dir takes it."""
    path = Path(recorded)
    if not path.is_absolute() or path.name != f"{session_id}.sock" or ".." in path.parts:
        raise AgentTtyError(
            ErrorCode.STORAGE_ERROR,
            f"session {session_id}'s manifest names the socket {recorded!r}, which is not <folder>/{session_id}.sock",
            sessionId=session_id,
            path=recorded,
        )
    try:
        check_socket_dir(path.parent, checked_home)
    except FileNotFoundError:
        pass  # no folder, so no socket: the connect says the host is unreachable
    except OSError as err:
        raise AgentTtyError(ErrorCode.STORAGE_ERROR, f"cannot check {path.parent}: {err.strerror}", path=recorded) from None
    return recorded


def remove_socket(recorded: str, session_id: str) -> None:
    """Unlink the socket of a host that ended, through its checked folder's fd, and only a
    socket of ours (never what a record names elsewhere)."""
    import stat

    try:
        path = Path(trusted_socket_path(recorded, session_id))
    except AgentTtyError:
        return
    from agent_tty.storage.fs import Folder

    try:
        folder = Folder(path.parent)
    except OSError:
        return
    try:
        info = folder.lstat(path.name)
        # A Unix socket, or the address file of a host that served a loopback port.
        ours = stat.S_ISSOCK(info.st_mode) or stat.S_ISREG(info.st_mode)
        if ours and current().owner(str(path), info) == current().user():
            folder.unlink(path.name)
    except OSError:
        pass
    finally:
        folder.close()
