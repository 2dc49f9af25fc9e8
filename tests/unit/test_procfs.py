from __future__ import annotations

import os

import pytest

from agent_tty_plugins._posix import groups, procfs


def test_parse_stat_with_spaces_and_parens_in_comm() -> None:
    line = "4242 (we ird) (name)) S 1 4242 4242 34816 4242 4194560 " + " ".join(["0"] * 12) + " 987654 0 0"
    stat = procfs.parse_stat(line)
    assert (stat.pid, stat.state, stat.ppid, stat.pgrp, stat.session) == (4242, "S", 1, 4242, 4242)
    assert stat.start_time == 987654


def test_read_own_stat() -> None:
    stat = procfs.read_stat(os.getpid())
    assert stat is not None and stat.pid == os.getpid() and stat.ppid == os.getppid()
    assert procfs.read_stat(2**22 + 12345) is None


@pytest.mark.parametrize("text, value", [("/autogroup-17 nice 0\n", 17), ("", procfs.DEFAULT_AUTOGROUP), ("\n", procfs.DEFAULT_AUTOGROUP), ("/other-3 nice 0", None), ("/autogroup-x", None)])
def test_parse_autogroup(text: str, value: int | None) -> None:
    assert procfs.parse_autogroup(text) == value


def test_group_signals_refuse_wide_ids() -> None:
    for pgid in (0, 1, -1, -5, True):
        with pytest.raises(ValueError):
            groups.signal_group(pgid, 0)  # type: ignore[arg-type]


def test_probe_of_a_free_group_id() -> None:
    assert groups.probe_group(2**22 + 12345) is groups.Probe.NONE


def test_read_stat_raises_what_does_not_prove_a_process_gone() -> None:
    """None reads "gone": read_stat answers it only when no such process is in view. Out of fds
    (EMFILE) it raises, and its docstring (and agent_tty_plugins.posix's) says so."""
    import subprocess
    import sys

    script = (
        "import errno, os, resource\n"
        "from agent_tty_plugins._posix import procfs\n"
        "held = []\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))\n"
        "try:\n"
        "    while True: held.append(os.open('/dev/null', os.O_RDONLY))\n"
        "except OSError as err: assert err.errno == errno.EMFILE\n"
        "try: procfs.read_stat(os.getpid())\n"
        "except OSError as err: print(errno.errorcode[err.errno])\n"
        "else: print('no error')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "EMFILE"
    from agent_tty_plugins import posix

    assert "EMFILE" in (procfs.read_stat.__doc__ or "")
    assert "EMFILE" in (posix.__doc__ or "")


def _stat(pid: int, session: int, pgrp: int | None = None, state: str = "S") -> procfs.ProcStat:
    rest = " ".join(["0"] * 12)
    return procfs.parse_stat(f"{pid} (p) {state} 1 {pgrp or session} {session} 0 0 0 {rest} 100 0 0")


def test_session_scans_read_again_only_what_may_have_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process read outside the session is skipped while its /proc entry (pid and inode) stays;
    members, new entries, a pid whose entry has another inode (a new process), inode 1 and the
    recent pids are read every scan (the frozen judgement's rounds, ADR 0040)."""
    listing = [(10, 100), (11, 101), (12, 1), (20, 200)]
    stats = {10: _stat(10, 5), 11: _stat(11, 5), 12: _stat(12, 5), 20: _stat(20, 20)}
    reads: list[int] = []

    def read_stat(pid: int) -> procfs.ProcStat | None:
        reads.append(pid)
        return stats.get(pid)

    monkeypatch.setattr(procfs, "_listing", lambda: listing)
    monkeypatch.setattr(procfs, "read_stat", read_stat)
    monkeypatch.setattr(procfs, "recent_pids", lambda: [11])
    scans = procfs.SessionScans(20)
    assert [m.pid for m in scans.scan().members] == [20]
    assert reads == [10, 11, 12, 20, 11]
    reads.clear()
    assert [m.pid for m in scans.scan().members] == [20]
    assert reads == [12, 20, 11], "outside and unchanged: 10 and 11 skipped; inode 1, the member and the recent pid read"
    reads.clear()
    listing[0] = (10, 300)  # pid 10 given to a new process: another inode
    stats[10] = _stat(10, 20, state="T")
    listing.append((21, 210))
    stats[21] = _stat(21, 9, pgrp=20)
    assert sorted(m.pid for m in scans.scan().members) == [10, 20, 21]
    assert reads == [10, 12, 20, 21, 11]


def test_session_scans_find_a_real_member_again_and_again() -> None:
    scans = procfs.SessionScans(os.getsid(0))
    for _ in range(3):
        assert os.getpid() in [m.pid for m in scans.scan().members]
    assert procfs.scan_session(os.getsid(0)).members
