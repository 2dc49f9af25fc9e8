"""The replay tool: hold one file-system call in one agent-tty process, from outside the product.

Put this folder on PYTHONPATH; every Python process then loads it at start-up (the CLI, the
host, a destroy re-run). It does nothing unless AGENT_TTY_REPLAY_HOLD is set:

    AGENT_TTY_REPLAY_HOLD='<process>:<op>:<path suffix>:<nth>:<ms>[,<more holds>]'
    AGENT_TTY_REPLAY_LOG=/path/to/log    # 'hold ...' and 'release ...' lines, for tests to poll

<process> is the command name (create, list, inspect, destroy, gc, ...) or `host`;
<op> is rename (os.rename/os.replace, matched on the destination), read (open, or os.open
of a file, for reading), write (open or os.open for writing), unlink (os.unlink/os.remove) or rmtree
(shutil.rmtree; with dir_fd, matched on the folder's full path);
<nth> counts matching calls in that process from 1. The call is held <ms> milliseconds and
then performed as usual: a hold changes timing only.

A sixth field `after=<trigger suffix>` re-arms a hold: it counts <nth> from each call (of any
op above) whose path ends with the trigger, and holds once per trigger. For example
`destroy:read:/stat:1:200:after=/ns_last_pid` holds the first /proc/PID/stat read after every
read of ns_last_pid: the pids read there are 200 ms old when their stats are read, as on a busy
machine that preempts the scan.

A field `until=<suffix>` ends the hold early: as soon as another call of the same op whose path
ends with <suffix> has been performed in this process (by another thread), the held call goes
on; <ms> is then only the cap. It forces the order "the later call lands first" on code that
runs a call in a thread of its own, and costs a single-threaded process the whole cap.

One more op changes an answer instead of the timing: `hide` makes os.stat (and os.lstat) of a
matching path raise FileNotFoundError from the <nth> call on, so the process believes a file is
missing (a kernel without cgroup.kill); each hidden call logs a 'hide' line.
"""

from __future__ import annotations

import builtins
import os
import shutil
import sys
import threading
import time

_SPEC = os.environ.get("AGENT_TTY_REPLAY_HOLD", "")
_LOG = os.environ.get("AGENT_TTY_REPLAY_LOG")


def _parse(spec: str) -> list[dict]:
    holds = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        process, op, suffix, nth, ms, *rest = part.split(":")
        options = dict(field.split("=", 1) for field in rest)
        after = options.get("after")
        holds.append({
            "process": process, "op": op, "suffix": suffix, "nth": int(nth), "ms": int(ms), "seen": 0,
            "after": after, "armed": after is None, "until": options.get("until"), "done": threading.Event(),
        })
    return holds


def _process_name() -> str:
    argv = sys.argv
    first = argv[0] if argv else ""
    if first.endswith(os.path.join("agent_tty", "host", "__main__.py")) or "agent_tty.host" in argv[:2]:
        return "host"
    args = argv[1:]
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--home":
            skip = True
            continue
        if arg.startswith("-"):
            continue
        return arg
    return ""


def _log(line: str) -> None:
    if _LOG:
        with _real_open(_LOG, "a") as handle:
            handle.write(line + "\n")


def _full_path(path: object, dir_fd: int | None) -> str | None:
    """The path a call names, joined to its dir_fd's folder when relative; None for an fd."""
    try:
        text = os.fsdecode(path)  # type: ignore[arg-type]
    except TypeError:
        return None
    if dir_fd is not None and not text.startswith("/"):
        try:
            text = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), text)
        except OSError:
            pass
    return text


def _maybe_hold(op: str, path: object, dir_fd: int | None = None) -> None:
    text = _full_path(path, dir_fd)
    if text is None:
        return
    name = None
    for hold in _HOLDS:
        if hold["after"] is not None and text.endswith(hold["after"]):
            hold["armed"], hold["seen"] = True, 0  # counted from this call on
            continue
        if hold["op"] != op or not text.endswith(hold["suffix"]) or not hold["armed"]:
            continue
        name = name if name is not None else _process_name()
        if hold["process"] != name:
            continue
        hold["seen"] += 1
        if hold["seen"] == hold["nth"]:
            if hold["after"] is not None:
                hold["armed"] = False  # once per trigger
            _log(f"hold {name} {op} {text} {hold['nth']} pid={os.getpid()}")
            if hold["until"] is None:
                time.sleep(hold["ms"] / 1000)
            else:
                hold["holding"] = threading.get_ident()
                early = hold["done"].wait(hold["ms"] / 1000)
                _log(f"until {name} {op} {text} {'met' if early else 'not met'} pid={os.getpid()}")
            _log(f"release {name} {op} {text} {hold['nth']} pid={os.getpid()}")


def _performed(op: str, path: object, dir_fd: int | None = None) -> None:
    """A call was performed: a hold waiting `until` a call like it (from another thread) goes on."""
    waiting = [h for h in _HOLDS if h["until"] is not None and h["op"] == op and h.get("holding") not in (None, threading.get_ident())]
    if not waiting:
        return
    text = _full_path(path, dir_fd)
    for hold in waiting:
        if text is not None and text.endswith(hold["until"]):
            hold["done"].set()


_real_open = builtins.open
_HOLDS = _parse(_SPEC) if _SPEC else []

if _HOLDS:
    _real_rename, _real_replace = os.rename, os.replace
    _real_unlink, _real_remove = os.unlink, os.remove
    _real_rmtree = shutil.rmtree
    _real_os_open = os.open
    _real_stat, _real_lstat = os.stat, os.lstat

    def _open(file, mode="r", *args, **kwargs):  # type: ignore[no-untyped-def]
        writing = any(c in mode for c in "wax+")
        _maybe_hold("write" if writing else "read", file)
        return _real_open(file, mode, *args, **kwargs)

    def _os_open(path, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
        if flags & os.O_ACCMODE == os.O_RDONLY and not flags & os.O_DIRECTORY:
            _maybe_hold("read", path, kwargs.get("dir_fd"))
        elif flags & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR):
            _maybe_hold("write", path, kwargs.get("dir_fd"))
        return _real_os_open(path, flags, *args, **kwargs)

    def _hidden(path, dir_fd):  # type: ignore[no-untyped-def]
        text = _full_path(path, dir_fd)
        if text is None:
            return False
        name = None
        for hold in _HOLDS:
            if hold["op"] == "hide" and text.endswith(hold["suffix"]):
                name = name if name is not None else _process_name()
                if hold["process"] == name:
                    hold["seen"] += 1
                    if hold["seen"] >= hold["nth"]:
                        _log(f"hide {name} {text} pid={os.getpid()}")
                        return True
        return False

    def _stat(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if _hidden(path, kwargs.get("dir_fd")):
            raise FileNotFoundError(2, "hidden by the replay tool", path)
        return _real_stat(path, *args, **kwargs)

    def _lstat(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if _hidden(path, kwargs.get("dir_fd")):
            raise FileNotFoundError(2, "hidden by the replay tool", path)
        return _real_lstat(path, *args, **kwargs)

    def _rename(src, dst, *args, **kwargs):  # type: ignore[no-untyped-def]
        _maybe_hold("rename", dst)
        try:
            return _real_rename(src, dst, *args, **kwargs)
        finally:
            _performed("rename", dst)

    def _replace(src, dst, *args, **kwargs):  # type: ignore[no-untyped-def]
        _maybe_hold("rename", dst)
        try:
            return _real_replace(src, dst, *args, **kwargs)
        finally:
            _performed("rename", dst)

    def _unlink(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        _maybe_hold("unlink", path)
        return _real_unlink(path, *args, **kwargs)

    def _remove(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        _maybe_hold("unlink", path)
        return _real_remove(path, *args, **kwargs)

    def _rmtree(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        _maybe_hold("rmtree", path, kwargs.get("dir_fd"))
        return _real_rmtree(path, *args, **kwargs)

    builtins.open = _open
    os.open = _os_open
    if any(hold["op"] == "hide" for hold in _HOLDS):
        os.stat, os.lstat = _stat, _lstat
    os.rename, os.replace = _rename, _replace
    os.unlink, os.remove = _unlink, _remove
    shutil.rmtree = _rmtree
