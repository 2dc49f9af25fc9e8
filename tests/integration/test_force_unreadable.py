"""ForceSkipsUnreadableGroup against the real CLI: destroy --force ends a session whose
program.json it cannot read, and only then; gc names destroy --force only where it works.

program.json is made unreadable in two ways: replaced by a folder (EISDIR, also as root) and,
as an unprivileged user, `chmod 000` (EACCES; root reads it anyway). Other errnos are injected
into one CLI process by a sitecustomize the test writes (the file system gives no EMFILE on
demand). The replay tool (tests/replay) holds one read to force an order. Every test ends only
the processes of its own session, by pid.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, pid_alive, wait_until

pytestmark = pytest.mark.integration

HOWS = [
    pytest.param("folder", id="folder-EISDIR"),
    pytest.param(
        "mode000",
        id="mode000-EACCES",
        marks=pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000"),
    ),
]
WAY_OUT = "(destroy --force removes it)"


def _unreadable(path: Path, how: str) -> Callable[[], None]:
    """Make a record unreadable; returns what makes it readable again (a no-op once gc removed
    its folder)."""
    data = path.read_bytes()
    if how == "folder":
        path.unlink()
        path.mkdir()
    else:
        path.chmod(0o000)

    def restore() -> None:
        if not path.parent.exists():
            return
        if path.is_dir():
            path.rmdir()
            path.write_bytes(data)
        path.chmod(0o600)

    return restore


@pytest.fixture
def ended() -> Iterator[list[int]]:
    """Pids of this test's own session programs: SIGKILLed by pid at the end, whatever happened
    (the forced path sends them nothing, so they outlive the session)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _host_died(cli: Cli, ended: list[int]) -> tuple[str, int]:
    """A running session whose host was SIGKILLed; its program ignores the hang-up and runs on."""
    created = cli.create("sh", "-c", 'trap "" HUP; exec sleep 300')
    ended.append(created["childPid"])
    os.kill(created["hostPid"], signal.SIGKILL)
    wait_until(lambda: not pid_alive(created["hostPid"]), what="host death")
    return created["sessionId"], created["childPid"]


def _exited(cli: Cli) -> str:
    sid = cli.create("sh", "-c", "exit 3")["sessionId"]
    wait_until(lambda: cli.manifest(sid)["status"] == "exited", what="exit")
    return sid


def _untouched(cli: Cli, sid: str, program: int) -> None:
    """Nothing recorded, nothing killed: what a destroy that must not go on leaves."""
    assert cli.manifest(sid)["status"] == "running"
    assert not (cli.folder(sid) / "destroyed").exists()
    assert pid_alive(program)


def _held(log: Path, process: subprocess.Popen[str]) -> bool:
    """The hold began, or the process ended without reaching it (the caller then fails)."""
    return (log.exists() and "hold " in log.read_text()) or process.poll() is not None


def _hold_second_read(cli: Cli, sid: str, tmp_path: Path, ms: int) -> tuple[subprocess.Popen[str], Path]:
    """destroy --force with its second read of program.json held: after the first try of the
    forced path (new code) or after the reconcile's kill (base)."""
    log = tmp_path / "replay.log"
    forcing = cli.start("destroy", sid, "--force", env=cli.replay_env(f"destroy:read:/program.json:2:{ms}", log))
    wait_until(lambda: _held(log, forcing), timeout=20, what="destroy --force to reach its second read")
    if forcing.poll() is not None:
        out, err = forcing.communicate()
        raise AssertionError(f"destroy --force ended (exit {forcing.returncode}) before a second read: {out} {err}")
    return forcing, log


# ------------------------------------------------------------------ the way out


@pytest.mark.parametrize("how", HOWS)
def test_destroy_force_ends_a_session_whose_host_died_and_whose_program_record_it_cannot_read(
    cli: Cli, ended: list[int], how: str
) -> None:
    """The seed's second red-first case: the host is SIGKILLed, then program.json cannot be read.
    A plain destroy fails on the read; destroy --force stops nothing it cannot prove, records
    destroyed unchecked, and says so; gc then removes the session."""
    sid, program = _host_died(cli, ended)
    restore = _unreadable(cli.folder(sid) / "program.json", how)
    try:
        plain = cli.run("destroy", sid)
        assert plain.code == 8 and plain.error["code"] == "STORAGE_ERROR", plain.stdout
        assert cli.manifest(sid)["status"] == "running"
        forced = cli.run("destroy", sid, "--force")
        assert forced.code == 0, forced.stdout
        assert forced.result["status"] == "destroyed" and forced.result["groupUnchecked"] is True
        assert "may still run" in forced.result["warning"]
        assert cli.manifest(sid)["status"] == "destroyed"
        assert pid_alive(program), "the forced path sends the group nothing it cannot prove"
        assert cli.run("gc").result["removedSessions"] == [sid]
    finally:
        restore()


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize(
    "state, what", [("host-died", "reconcile session"), ("exited", "check the session's program group")]
)
def test_gc_names_destroy_force_where_it_removes_the_session(
    cli: Cli, ended: list[int], how: str, state: str, what: str
) -> None:
    """The seed's two wordings: a failed reconcile (an active session whose host died) and a
    failed group check (an ended session); and the hint is true: destroy --force then works."""
    sid = _host_died(cli, ended)[0] if state == "host-died" else _exited(cli)
    restore = _unreadable(cli.folder(sid) / "program.json", how)
    try:
        (skipped,) = cli.run("gc").result["skippedSessions"]
        assert skipped["reason"].startswith(f"failed to {what} {WAY_OUT}: "), skipped
        forced = cli.run("destroy", sid, "--force")
        assert forced.code == 0 and forced.result["groupUnchecked"] is True, forced.stdout
    finally:
        restore()


@pytest.mark.parametrize("how", HOWS)
def test_gc_names_no_way_out_when_destroy_force_fails_too(cli: Cli, how: str) -> None:
    """session.json unreadable and no host.json to prove the host: destroy --force fails too,
    so gc must not name it."""
    sid = _exited(cli)
    host_json = cli.folder(sid) / "host.json"
    saved = host_json.read_bytes()
    host_json.unlink()
    restore = _unreadable(cli.folder(sid) / "session.json", how)
    try:
        (skipped,) = cli.run("gc").result["skippedSessions"]
        assert "destroy --force" not in skipped["reason"] and skipped["reason"].startswith("STORAGE_ERROR: "), skipped
        forced = cli.run("destroy", sid, "--force")
        assert forced.code == 8 and forced.error["code"] == "STORAGE_ERROR", forced.stdout
    finally:
        restore()
        host_json.write_bytes(saved)
    assert cli.run("destroy", sid, "--force").result["status"] == "destroyed"


@pytest.mark.parametrize("how", HOWS)
def test_gc_names_destroy_force_for_an_unreadable_manifest_that_host_json_backs(cli: Cli, how: str) -> None:
    """session.json unreadable, host.json readable: destroy --force goes on through host.json and
    program.json (ManifestlessForce), so gc names it, and it works."""
    sid = _exited(cli)
    restore = _unreadable(cli.folder(sid) / "session.json", how)
    try:
        (skipped,) = cli.run("gc").result["skippedSessions"]
        assert skipped["reason"].startswith("cannot read its manifest (destroy --force stops it"), skipped
        forced = cli.run("destroy", sid, "--force")
        assert forced.code == 0 and forced.result["manifestUnreadable"], forced.stdout
    finally:
        restore()


# ------------------------------------------------------------------ never forced


def test_a_read_that_fails_after_the_first_check_fails_the_destroy(
    cli: Cli, ended: list[int], tmp_path: Path
) -> None:
    """The group read and judged alive (the first check); program.json becomes a folder before
    the read that leads to the kill: destroy --force fails and records nothing, so a group that
    read alive is never recorded destroyed without its SIGKILL."""
    sid, program = _host_died(cli, ended)
    record = cli.folder(sid) / "program.json"
    forcing, _ = _hold_second_read(cli, sid, tmp_path, 3000)
    restore = _unreadable(record, "folder")
    try:
        out, _err = forcing.communicate(timeout=60)
        assert forcing.returncode == 8, out
        _untouched(cli, sid, program)
    finally:
        restore()
    done = cli.run("destroy", sid, "--force").result
    assert done["status"] == "destroyed" and "groupUnchecked" not in done
    wait_until(lambda: not pid_alive(program), what="the group's SIGKILL")


def test_a_second_read_that_passes_stops_the_group(cli: Cli, ended: list[int], tmp_path: Path) -> None:
    """The first read fails (EISDIR) and program.json is readable again before the second, 100 ms
    later: the group reads alive and gets its SIGKILL, and nothing is recorded unchecked."""
    sid, program = _host_died(cli, ended)
    restore = _unreadable(cli.folder(sid) / "program.json", "folder")
    try:
        forcing, _ = _hold_second_read(cli, sid, tmp_path, 3000)
    finally:
        restore()
    out, _err = forcing.communicate(timeout=60)
    assert forcing.returncode == 0, out
    assert '"groupUnchecked"' not in out and cli.manifest(sid)["status"] == "destroyed"
    wait_until(lambda: not pid_alive(program), what="the group's SIGKILL")


@pytest.mark.parametrize("name", ["EMFILE", "ENFILE", "ENOMEM", "EAGAIN", "EINTR"])
def test_other_errnos_fail_the_destroy(cli: Cli, ended: list[int], tmp_path: Path, name: str) -> None:
    """An errno a retry may change (injected into the destroy process's reads of program.json)
    never lets destroy --force go on blind: it fails, and records nothing."""
    sid, program = _host_died(cli, ended)
    forced = cli.run("destroy", sid, "--force", env=_failing_reads(tmp_path, "/program.json", name))
    assert forced.code == 8 and forced.error["code"] == "STORAGE_ERROR", forced.stdout
    assert forced.error["details"]["errno"] == name
    _untouched(cli, sid, program)
    done = cli.run("destroy", sid, "--force").result
    assert done["status"] == "destroyed" and "groupUnchecked" not in done
    wait_until(lambda: not pid_alive(program), what="the group's SIGKILL")


def test_a_host_that_does_not_end_fails_the_destroy(cli: Cli, ended: list[int]) -> None:
    """The host runs but nothing proves it (host.json is gone, so it reads unknown): no kill, and
    destroy --force ends with HOST_TIMEOUT before it reads the group, unreadable or not."""
    created = cli.create("sh", "-c", 'trap "" HUP; exec sleep 300')
    sid, program, host = created["sessionId"], created["childPid"], created["hostPid"]
    ended.append(program)
    host_record = cli.folder(sid) / "host.json"
    host_data = host_record.read_bytes()
    host_record.unlink()
    restore = _unreadable(cli.folder(sid) / "program.json", "folder")
    try:
        forced = cli.run("destroy", sid, "--force")
        assert forced.code == 5 and forced.error["code"] == "HOST_TIMEOUT", forced.stdout
        assert "reads unknown" in forced.error["message"]
        _untouched(cli, sid, program)
        assert pid_alive(host)
    finally:
        restore()
        host_record.write_bytes(host_data)
        host_record.chmod(0o600)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_an_abort_between_the_two_reads_records_nothing(
    cli: Cli, ended: list[int], tmp_path: Path, signum: int
) -> None:
    """destroy --force is stopped while it waits for its second read: nothing is recorded (no
    marker, no destroyed) and nothing killed; the next destroy --force does the whole job."""
    sid, program = _host_died(cli, ended)
    restore = _unreadable(cli.folder(sid) / "program.json", "folder")
    try:
        forcing, _ = _hold_second_read(cli, sid, tmp_path, 30000)
        forcing.send_signal(signum)  # our own destroy process, by its pid
        forcing.communicate(timeout=30)
        assert forcing.returncode == (130 if signum == signal.SIGINT else -signal.SIGKILL)
        _untouched(cli, sid, program)
        done = cli.run("destroy", sid, "--force").result
        assert done["status"] == "destroyed" and done["groupUnchecked"] is True
    finally:
        restore()


def _failing_reads(tmp_path: Path, suffix: str, name: str) -> dict[str, Any]:
    """The environment of a CLI process whose reads of files ending in `suffix` fail with errno
    `name`: a sitecustomize on PYTHONPATH wraps open and os.open (read-only, not a directory)."""
    folder = tmp_path / "inject"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        textwrap.dedent(
            """\
            import builtins
            import errno
            import os

            _SUFFIX, _NAME = os.environ["AGENT_TTY_TEST_FAIL_READ"].rsplit(":", 1)
            _CODE = getattr(errno, _NAME)
            _open, _os_open = builtins.open, os.open


            def _fail(path):
                try:
                    text = os.fspath(path)
                except TypeError:
                    return
                if isinstance(text, bytes):
                    text = text.decode(errors="replace")
                if text.endswith(_SUFFIX):
                    raise OSError(_CODE, os.strerror(_CODE), text)


            def _open_reading(file, mode="r", *args, **kwargs):
                if not any(c in mode for c in "wax+"):
                    _fail(file)
                return _open(file, mode, *args, **kwargs)


            def _os_open_reading(path, flags, *args, **kwargs):
                if flags & os.O_ACCMODE == os.O_RDONLY and not flags & os.O_DIRECTORY:
                    _fail(path)
                return _os_open(path, flags, *args, **kwargs)


            builtins.open = _open_reading
            os.open = _os_open_reading
            if _os_open in os.supports_dir_fd:  # shutil.rmtree's fd-based removal checks this
                os.supports_dir_fd.add(_os_open_reading)
            """
        )
    )
    assert hasattr(errno, name)
    return {"PYTHONPATH": str(folder), "AGENT_TTY_TEST_FAIL_READ": f"{suffix}:{name}"}


HOST_HOWS = [*HOWS, pytest.param("bad-json", id="bad-json")]


def _unreadable_host_json(path: Path, how: str) -> Callable[[], None]:
    """host.json unreadable: a folder (EISDIR), mode 000 (EACCES) or a record that does not parse."""
    if how != "bad-json":
        return _unreadable(path, how)
    data = path.read_bytes()
    path.write_text("{")

    def restore() -> None:
        if path.parent.exists():
            path.write_bytes(data)

    return restore


@pytest.mark.parametrize("how", HOST_HOWS)
def test_an_unreadable_host_json_kills_no_live_host(cli: Cli, ended: list[int], how: str) -> None:
    """ProvesHostPid (R19) when host.json cannot be read: nothing proves the host, so destroy
    --force kills neither it nor the group, records nothing and ends with HOST_TIMEOUT (as when
    host.json is missing); once the record reads again, destroy --force ends the session."""
    created = cli.create("sh", "-c", 'trap "" HUP; exec sleep 300')
    sid, program, host = created["sessionId"], created["childPid"], created["hostPid"]
    ended.append(program)
    restore = _unreadable_host_json(cli.folder(sid) / "host.json", how)
    try:
        forced = cli.run("destroy", sid, "--force")
        assert forced.code == 5 and forced.error["code"] == "HOST_TIMEOUT", forced.stdout
        assert "reads unknown" in forced.error["message"]
        _untouched(cli, sid, program)
        assert pid_alive(host)
    finally:
        restore()
    done = cli.run("destroy", sid, "--force")
    assert done.code == 0 and done.result["status"] == "destroyed", done.stdout
    wait_until(lambda: not pid_alive(program) and not pid_alive(host), what="the session to end")


@pytest.mark.parametrize("how", HOST_HOWS)
def test_an_unreadable_host_json_of_a_dead_host(cli: Cli, ended: list[int], how: str) -> None:
    """The host died and host.json cannot be read: the probe of the manifest's hostPid proves
    the death (no process has it), so destroy --force goes on to the group. linux_cgroup's leaf
    proves the group: it is stopped and the session recorded destroyed. linux_autogroup's token
    cannot tell the host's pid space without host.json (UnsharedGroupReadsUnknown): the group
    reads unshared, nothing is killed or recorded, destroy fails; once host.json reads again,
    destroy --force ends the session."""
    sid, program = _host_died(cli, ended)
    mechanism = cli.manifest(sid)["mechanism"]
    restore = _unreadable_host_json(cli.folder(sid) / "host.json", how)
    try:
        done = cli.run("destroy", sid, "--force")
        if mechanism == "linux_autogroup":
            assert done.code == 5 and done.error["code"] == "HOST_TIMEOUT", done.stdout
            _untouched(cli, sid, program)
        else:
            assert done.code == 0 and done.result["status"] == "destroyed", done.stdout
    finally:
        restore()
    if mechanism == "linux_autogroup":
        done = cli.run("destroy", sid, "--force")
        assert done.code == 0 and done.result["status"] == "destroyed", done.stdout
    wait_until(lambda: not pid_alive(program), what="the group's SIGKILL")
