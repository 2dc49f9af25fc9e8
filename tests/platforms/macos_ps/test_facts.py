"""The pure rules of macos_ps on values in the formats macOS gives them.

Where the formats come from:
- Terminals: psutil's Process.terminal() on macOS maps kinfo_proc's e_tdev to a /dev path
  (psutil/_psosx.py, _psposix.get_terminal_map: "/dev/ttys003") and gives None without one;
  macOS ps(1) `-o tty=` prints the name without /dev/ ("ttys003") and "??" for none; procps ps on
  Linux prints "?" (and "pts/3"); the console is "console" in macOS ps.
- Host command lines: what psutil's cmdline() (KERN_PROCARGS2) returns for the host that
  agent_tty/lifecycle/create.py starts as `sys.executable -m agent_tty.host SID PID HOME`, with the
  argv[0] a python.org framework build shows after its launcher re-exec'd itself.
"""

from __future__ import annotations

import pytest

from agent_tty_plugins.macos_ps import facts

FRAMEWORK_HOST = [
    "/Library/Frameworks/Python.framework/Versions/3.12/Resources/Python.app/Contents/MacOS/Python",
    "-m",
    "agent_tty.host",
    "k3v9q2mfz0ab",
    "48213",
    "/Users/ana/.agent-tty",
]
HOMEBREW_HOST = ["/opt/homebrew/opt/python@3.13/bin/python3.13", "-m", "agent_tty.host", "x1", "7", "/Users/b/h"]


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("/dev/ttys003", "ttys003"),  # psutil on macOS
        ("ttys003", "ttys003"),  # macOS ps -o tty=
        ("/dev/pts/3", "pts/3"),  # psutil on Linux
        ("??", None),  # macOS ps: no controlling terminal
        ("?", None),  # procps ps: no controlling terminal
        ("-", None),
        ("", None),
        ("console", None),  # macOS ps: the console, which every console process shares
        ("/dev/console", None),
        (None, None),  # psutil: no controlling terminal
    ],
)
def test_real_terminal(value: str | None, name: str | None) -> None:
    assert facts.real_terminal(value) == name


def test_two_processes_without_a_terminal_never_match() -> None:
    assert facts.same_terminal(None, None) is False
    assert facts.same_terminal("??", "??") is False
    assert facts.same_terminal("console", "/dev/console") is False
    assert facts.same_terminal("/dev/ttys003", "ttys003") is True
    assert facts.same_terminal("/dev/ttys003", "/dev/ttys004") is False


def test_host_session_reads_the_tail_of_the_command_line() -> None:
    assert facts.host_session(FRAMEWORK_HOST) == "k3v9q2mfz0ab"
    assert facts.host_session(HOMEBREW_HOST) == "x1"
    # Not a host: the module name elsewhere, or no session id after it.
    assert facts.host_session(["vim", "agent_tty.host", "x1"]) is None
    assert facts.host_session(["python3", "-m", "agent_tty.host"]) is None
    assert facts.host_session(["python3", "-m", "agent_tty", "list"]) is None
    assert facts.host_session([]) is None


def test_start_of_compares_only_on_the_same_clock() -> None:
    record = {"startTime": 1718000000.123456, "clock": "epoch"}
    assert facts.start_of(record, "epoch") == 1718000000.123456
    assert facts.start_of(record, "boot") is None  # another psutil's clock: cannot compare
    assert facts.start_of({"startTime": 5}, "epoch") is None  # a linux_autogroup-style record
    assert facts.start_of({"startTime": True, "clock": "epoch"}, "epoch") is None
    assert facts.start_of({"startTime": float("nan"), "clock": "epoch"}, "epoch") is None
    assert facts.start_of(None, "epoch") is None
    assert facts.same_start(1718000000.123456, 1718000000.123456)
    assert not facts.same_start(1718000000.123456, 1718000000.124456)  # a millisecond apart


def test_a_reap_dates_members_on_its_own_clock_and_boot() -> None:
    """ReapDatesMembers: only a reap read on the same clock dates a member, in the same boot."""
    reaped = {"reapedAt": 812.34, "clock": "boot", "bootId": "b1"}
    assert facts.reaped_at(reaped, "boot") == 812.34
    assert facts.reaped_at(reaped, "epoch") is None
    assert facts.reaped_at(None, "boot") is None  # no host saw the leader end
    assert facts.reaped_at({"reapedAt": "812", "clock": "boot"}, "boot") is None
    assert facts.reaped_at({"reapedAt": float("inf"), "clock": "boot"}, "boot") is None
    assert facts.other_boot(reaped, "b2") and not facts.other_boot(reaped, "b1")
    assert not facts.other_boot(reaped, None) and not facts.other_boot({"reapedAt": 1.0, "clock": "epoch"}, "b2")
    # Linux truncates a start time to its 10 ms tick: a fork 1 ms before the reap reads earlier.
    assert facts.started_by(812.33, 812.34) and facts.started_by(812.34, 812.34)
    assert not facts.started_by(812.35, 812.34) and not facts.started_by(None, 812.34)
