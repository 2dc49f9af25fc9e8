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
