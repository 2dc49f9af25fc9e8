"""What a program inherits from the process that starts its host, besides the environment.

A spare host (lifecycle/standby.py) is started ahead of a create; the program it later runs gets
the spare's credentials and limits, not the caller's at the moment of that create. A caller
that dropped privileges meanwhile (groups, rlimits, no_new_privs, nice, a seccomp filter, a
cgroup, a namespace) must not have them handed back: the spare is used only while every fact
here is what it was when the spare started. The facts are read, never inferred; one that
cannot be read reads as None on both sides, and a change from or to None counts as a change.
The working folder is not one: create names the program's own (the host runs in /).
Not seen: a Landlock domain (no file shows it; unprivileged Landlock needs no_new_privs, which is
compared) and an LSM policy that changes while the label stays.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_STATUS_KEYS = ("Umask", "NoNewPrivs", "Seccomp", "Seccomp_filters", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
"""Lines of /proc/self/status that a child inherits and no other call reads."""
_NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid_for_children", "time_for_children", "user", "uts")


def inherited_facts() -> dict[str, Any]:
    """The facts a program started now by this process would inherit; equal dicts mean equal
    starts. Cheap (a few system calls and two /proc reads): taken at every create."""
    facts: dict[str, Any] = {}
    if sys.platform == "win32":
        return facts
    import resource

    facts["ids"] = (os.getuid(), os.geteuid(), os.getgid(), os.getegid(), tuple(sorted(os.getgroups())))
    facts["rlimits"] = tuple(
        (name, _safe(lambda number=getattr(resource, name): resource.getrlimit(number)))  # noqa: B008 - binds each name's number
        for name in sorted(n for n in dir(resource) if n.startswith("RLIMIT_"))
    )
    facts["nice"] = _safe(lambda: os.getpriority(os.PRIO_PROCESS, 0))
    if hasattr(os, "sched_getaffinity"):
        facts["cpus"] = _safe(lambda: tuple(sorted(os.sched_getaffinity(0))))
    if sys.platform.startswith("linux"):
        facts["status"] = _status()
        facts["cgroup"] = _safe(lambda: _read("/proc/self/cgroup"))
        facts["label"] = _safe(lambda: _read("/proc/self/attr/current"))
        facts["namespaces"] = tuple((name, _safe(lambda name=name: os.readlink(f"/proc/self/ns/{name}"))) for name in _NAMESPACES)
    else:
        facts["umask"] = _umask()
    return facts


def differences(then: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The names of the facts that differ (for a debug line; any one is reason enough)."""
    return sorted(key for key in then.keys() | now.keys() if then.get(key) != now.get(key))


def _status() -> tuple[tuple[str, str], ...] | None:
    try:
        text = _read("/proc/self/status")
    except OSError:
        return None
    found = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in _STATUS_KEYS:
            found[key] = value.strip()
    return tuple(sorted(found.items()))


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _umask() -> int:
    """Where no /proc says it: set and set back (a thread starting a process in between would
    get 0o077, which is only stricter)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def _safe(read: Any) -> Any:
    try:
        return read()
    except (OSError, ValueError):
        return None
