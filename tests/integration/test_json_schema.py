"""Every command's real --json output validates against its schema (agent_tty.schema), in every
outcome: ok, each error code of CLI-CONTRACT.md's table, and the timed-out waits.

TABLE below is the coverage: (command, outcome) -> the exit code and the command line. A row
whose outcome is an error code expects that code. The sessions the rows use are made once per
module (Sessions) and ended by pid or destroy at its end.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest

from agent_tty.cli.main import COMMANDS, OTHER_JSON_COMMANDS
from agent_tty.protocol.errors import ErrorCode
from agent_tty.schema import RESULTS, validate_envelope
from tests.conftest import NOT_PINNED, Cli, pid_alive, processes_of_home, wait_until

pytestmark = [pytest.mark.integration, NOT_PINNED]

BASH = ("bash", "--norc", "--noprofile")
HUP_PROOF = ("sh", "-c", 'trap "" HUP; exec sleep 300')


class Sessions:
    """The sessions rows act on, each made on first use."""

    def __init__(self, cli: Cli, tmp: Path) -> None:
        self.cli = cli
        self.tmp = tmp
        self.programs: list[int] = []  # programs no host will end (their host was killed)
        self.servers: list[socket.socket] = []

    def bash(self, *options: str) -> str:
        return self.cli.create(*BASH, options=options)["sessionId"]

    @cached_property
    def live(self) -> str:
        sid = self.bash("--name", "schema-live")
        self.cli.run("run", sid, "seq 1 60", "--timeout", "10s")  # scrollback for --scrollback
        return sid

    @cached_property
    def ended(self) -> str:
        sid = self.cli.create("sh", "-c", "echo ENDED")["sessionId"]
        wait_until(lambda: self.cli.manifest(sid)["status"] == "exited", what="exit")
        return sid

    def _ended_copy(self) -> str:
        sid = self.cli.create("sh", "-c", "echo short")["sessionId"]
        wait_until(lambda: self.cli.manifest(sid)["status"] == "exited", what="exit")
        return sid

    @cached_property
    def bad_log(self) -> str:
        """An ended session whose event log has a line that is not an event: REPLAY_FAILED."""
        sid = self._ended_copy()
        with (self.cli.folder(sid) / "events.jsonl").open("ab") as log:
            log.write(b"this is not an event\n")
        return sid

    @cached_property
    def bad_manifest(self) -> str:
        """An ended session whose session.json does not parse: STORAGE_ERROR."""
        sid = self._ended_copy()
        (self.cli.folder(sid) / "session.json").write_text("{")
        return sid

    @cached_property
    def incomplete(self) -> str:
        """A folder without session.json (a create that died): list --all shows it."""
        folder = self.cli.home / "sessions" / "schema-incomplete"
        folder.mkdir(mode=0o700)
        return folder.name

    @cached_property
    def hostless(self) -> dict[str, Any]:
        return self.make_hostless()

    def make_hostless(self) -> dict[str, Any]:
        """A running session whose host was killed and whose program.json is gone: nothing
        proves its group ended, so it stays running (HOST_UNREACHABLE, HOST_TIMEOUT)."""
        created = self.cli.create(*HUP_PROOF)
        self.programs.append(created["childPid"])
        os.kill(created["hostPid"], signal.SIGKILL)
        wait_until(lambda: not pid_alive(created["hostPid"]), what="host death")
        (self.cli.folder(created["sessionId"]) / "program.json").unlink()
        return created

    @cached_property
    def fake_host(self) -> str:
        """A session whose socket is served by this test: it answers `mark` with an empty
        result (the CLI's catch-all: INTERNAL_ERROR) and anything else with a line that is not
        JSON (PROTOCOL_ERROR)."""
        created = self.cli.create(*HUP_PROOF)
        sid = created["sessionId"]
        self.programs.append(created["childPid"])
        os.kill(created["hostPid"], signal.SIGKILL)
        wait_until(lambda: not pid_alive(created["hostPid"]), what="host death")
        path = self.cli.manifest(sid)["socketPath"]
        if os.path.exists(path):
            os.unlink(path)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(4)
        self.servers.append(server)
        threading.Thread(target=_serve_badly, args=(server,), daemon=True).start()
        return sid

    def close(self) -> None:
        for server in self.servers:
            server.close()
        for pid in self.programs:
            try:
                os.kill(pid, signal.SIGKILL)  # this module's own session programs, by pid
            except ProcessLookupError:
                pass


def _serve_badly(server: socket.socket) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            request = conn.makefile("rb").readline()
            op = json.loads(request).get("op") if request.strip() else None
            conn.sendall(b'{"ok": true, "result": {}}\n' if op == "mark" else b"this is not json\n")


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sessions]:
    tmp = tmp_path_factory.mktemp("schema")
    home = tmp / "home"
    cli = Cli(home)
    made = Sessions(cli, tmp)
    try:
        yield made
    finally:
        made.close()
        folder = home / "sessions"
        for sid in os.listdir(folder) if folder.is_dir() else []:
            cli.run("destroy", "--force", sid, timeout=30)
        cli.run("gc", timeout=60)
        survivors = processes_of_home(home)
        wait_until(lambda: not processes_of_home(home), timeout=5, what=f"no process left: {survivors}")
        shutil.rmtree(tmp, ignore_errors=True)


Args = Callable[[Sessions], list[str]]
OK = "ok"

# (command, outcome) -> (exit code, the arguments after `agent-tty --json`)
TABLE: dict[tuple[str, str], tuple[int, Args]] = {
    ("create", OK): (0, lambda s: ["create", "--name", "schema-made", "--", "true"]),
    ("create", "USAGE"): (2, lambda s: ["create", "--cols", "x", "--", "true"]),
    ("create", "INVALID_INPUT"): (2, lambda s: ["create", "--env", "NOEQUALS", "--", "true"]),
    ("list", OK): (0, lambda s: ["list"]),
    ("list", "all, with incomplete and unreadable"): (0, lambda s: _made(s.incomplete, s.bad_manifest, s.ended) + ["list", "--all"]),
    ("inspect", OK): (0, lambda s: ["inspect", s.live]),
    ("inspect", "by name (resolvedFrom)"): (0, lambda s: _made(s.live) + ["inspect", "schema-live"]),
    ("inspect", "ended"): (0, lambda s: ["inspect", s.ended]),
    ("inspect", "SESSION_NOT_FOUND"): (3, lambda s: ["inspect", "nosuchsession"]),
    ("inspect", "STORAGE_ERROR"): (8, lambda s: ["inspect", s.bad_manifest]),
    ("destroy", OK): (0, lambda s: ["destroy", s.bash()]),
    ("destroy", "already destroyed"): (0, lambda s: _destroyed_twice(s)),
    ("destroy", "HOST_TIMEOUT"): (5, lambda s: ["destroy", s.hostless["sessionId"]]),
    ("destroy", "force, group unchecked"): (0, lambda s: ["destroy", "--force", s.make_hostless()["sessionId"]]),
    ("gc", OK): (0, lambda s: ["gc", "--older-than", "1h"]),
    ("gc", "dry run"): (0, lambda s: ["gc", "--dry-run"]),
    ("gc", "INVALID_INPUT"): (2, lambda s: ["gc", "--older-than", "soon"]),
    ("resize", OK): (0, lambda s: ["resize", s.live, "--cols", "90", "--rows", "30"]),
    ("resize", "INVALID_INPUT"): (2, lambda s: ["resize", s.live, "--cols", "0", "--rows", "30"]),
    ("signal", OK): (0, lambda s: ["signal", s.live, "WINCH"]),
    ("signal", "foreground"): (0, lambda s: ["signal", s.live, "INT"]),
    ("signal", "INVALID_INPUT"): (2, lambda s: ["signal", s.live, "NOSUCHSIGNAL"]),
    ("run", OK): (0, lambda s: ["run", s.live, "echo RAN", "--timeout", "10s"]),
    ("run", "no wait"): (0, lambda s: ["run", s.live, "true", "--no-wait"]),
    ("run", "command failed"): (12, lambda s: ["run", s.live, "(exit 3)", "--timeout", "10s"]),
    ("run", "timed out"): (11, lambda s: ["run", s.live, "sleep 3", "--timeout", "100ms"]),
    ("run", "program ended"): (4, lambda s: ["run", s.bash(), "exit 3", "--timeout", "10s"]),
    ("run", "SESSION_NOT_RUNNING"): (4, lambda s: ["run", s.ended, "true"]),
    ("type", OK): (0, lambda s: ["type", s.live, "x"]),
    ("type", "SESSION_NOT_RUNNING"): (4, lambda s: ["type", s.ended, "x"]),
    ("type", "HOST_UNREACHABLE"): (6, lambda s: ["type", s.hostless["sessionId"], "x"]),
    ("type", "PROTOCOL_ERROR"): (9, lambda s: ["type", s.fake_host, "x"]),
    ("paste", OK): (0, lambda s: ["paste", s.live, "y"]),
    ("paste", "in parts"): (0, lambda s: ["paste", s.live, "--file", _long_file(s)]),
    ("paste", "INVALID_INPUT"): (2, lambda s: ["paste", s.live, "--file", "/nonexistent/file"]),
    ("send-keys", OK): (0, lambda s: ["send-keys", s.live, "C-u"]),
    ("send-keys", "INVALID_INPUT"): (2, lambda s: ["send-keys", s.live, "NoSuchKey"]),
    ("wait", OK): (0, lambda s: ["wait", s.live, "--text", "zzz"]),
    ("wait", "screen stable"): (0, lambda s: ["wait", s.live, "--screen-stable-ms", "100"]),
    ("wait", "idle"): (0, lambda s: ["wait", s.live, "--idle-ms", "100"]),
    ("wait", "timed out"): (11, lambda s: ["wait", s.live, "--text", "NEVER-PRINTED", "--timeout", "200ms"]),
    ("wait", "exit of an ended session"): (0, lambda s: ["wait", s.ended, "--exit"]),
    ("wait", "output of an ended session"): (0, lambda s: ["wait", s.ended, "--text", "ENDED", "--output"]),
    ("wait", "SESSION_NOT_RUNNING"): (4, lambda s: ["wait", s.ended, "--text", "NEVER-PRINTED"]),
    ("wait", "INVALID_INPUT"): (2, lambda s: ["wait", s.live]),
    ("batch", OK): (0, lambda s: ["batch", s.live, '[{"kind": "type", "text": "x"}, {"kind": "wait", "text": "x", "timeout": 5}]']),
    ("batch", "step failed"): (11, lambda s: ["batch", s.live, '[{"kind": "wait", "text": "NEVER-PRINTED", "timeout": 0.2}, {"kind": "type", "text": "x"}]']),
    ("batch", "USAGE"): (2, lambda s: ["batch", s.live, '[{"kind": "nosuch"}]']),
    ("snapshot", OK): (0, lambda s: ["snapshot", s.live]),
    ("snapshot", "structured with scrollback"): (0, lambda s: ["snapshot", s.live, "--format", "structured", "--scrollback"]),
    ("snapshot", "replayed"): (0, lambda s: ["snapshot", s.ended, "--format", "structured"]),
    ("snapshot", "REPLAY_FAILED"): (10, lambda s: ["snapshot", s.bad_log]),
    ("snapshot", "INVALID_INPUT"): (2, lambda s: ["snapshot", s.live, "--format", "html"]),
    ("screenshot", OK): (0, lambda s: ["screenshot", s.live]),
    ("screenshot", "copied"): (0, lambda s: ["screenshot", s.live, "--out", str(s.tmp / "shot.png")]),
    ("screenshot", "EXPORT_FAILED"): (7, lambda s: ["screenshot", s.live, "--out", str(s.tmp)]),
    ("record", OK): (0, lambda s: ["record", "export", s.live]),
    ("record", "EXPORT_FAILED"): (7, lambda s: ["record", "export", s.bad_log]),
    ("mark", OK): (0, lambda s: ["mark", s.live, "m"]),
    ("mark", "INTERNAL_ERROR"): (1, lambda s: ["mark", s.fake_host, "m"]),
    ("version", OK): (0, lambda s: ["version"]),
    ("version", "USAGE"): (2, lambda s: ["version", "--nosuch"]),
    ("doctor", OK): (0, lambda s: ["doctor"]),
    ("platform", OK): (0, lambda s: ["platform"]),
    ("schema", OK): (0, lambda s: ["schema"]),
    ("schema", "one command"): (0, lambda s: ["schema", "snapshot"]),
    ("schema", "INVALID_INPUT"): (2, lambda s: ["schema", "nosuch"]),
    ("mcp", OK): (0, lambda s: ["mcp", "--help"]),  # its result is the MCP stream (test_mcp.py)
    ("mcp", "USAGE"): (2, lambda s: ["mcp", "--nosuch"]),
    ("dashboard", OK): (0, lambda s: ["dashboard", "--once", "--cols", "60", "--rows", "10"]),
    ("dashboard", "USAGE"): (2, lambda s: ["dashboard"]),  # no terminal and no --once
    ("dashboard", "INVALID_INPUT"): (2, lambda s: ["dashboard", "--once", "--rows", "0"]),
    ("help", OK): (0, lambda s: ["--help"]),
    ("install-completion", OK): (0, lambda s: ["--install-completion", "bash"]),
    ("install-completion", "USAGE"): (2, lambda s: ["--install-completion", "tcsh"]),
}

ENV: dict[tuple[str, str], Callable[[Sessions], dict[str, str]]] = {
    # doctor exits 1 where something does not work here (no font, no mechanism): still ok.
    ("install-completion", OK): lambda s: {"HOME": str(s.tmp), "XDG_DATA_HOME": str(s.tmp / "data")},
}

NOT_PRODUCIBLE = {
    ErrorCode.WAIT_TIMEOUT: "a timed-out wait or run is an ok envelope with timedOut: true (rows `timed out`)",
    ErrorCode.PLATFORM_UNAVAILABLE: "raised only on a system without PTYs or Unix sockets, not this one",
    ErrorCode.RESOURCE_LIMIT: "needs a process limit reached (test_create_refusals.py makes one), not a row's input",
    ErrorCode.COMMAND_FAILED: "only a batch step's error (row `batch:step failed` has WAIT_TIMEOUT's); run says it in an ok envelope",
    ErrorCode.MISSING_DEPENDENCY: "needs an install without the mcp extra (test_lean_install.py makes one), not this venv",
}
"""Codes no real input produces here: their documents come from the real emit_error path."""

UNSAFE_HOME_ROW = ("list", "UNSAFE_HOME")  # a Home of its own: made in its own test


def _made(*_sessions: object) -> list[str]:
    """Rows that need sessions to exist first name them here."""
    return []


def _destroyed_twice(s: Sessions) -> list[str]:
    sid = s.bash()
    assert s.cli.run("destroy", sid).code == 0
    return ["destroy", sid]


def _long_file(s: Sessions) -> str:
    path = s.tmp / "long.txt"
    path.write_text("z" * 70_000)  # more than one 64 Ki-character part
    return str(path)


@pytest.mark.parametrize("row", list(TABLE), ids=[f"{c}:{o}" for c, o in TABLE])
def test_output_validates_against_the_schema(sessions: Sessions, row: tuple[str, str]) -> None:
    command, outcome = row
    code, args = TABLE[row]
    env = ENV[row](sessions) if row in ENV else None
    done = sessions.cli.run(*args(sessions), env=env)
    document = done.doc
    if command == "doctor" or command == "platform":
        assert done.code in (0, 1), done.stdout
    else:
        assert done.code == code, (done.code, done.stdout, done.stderr)
    assert document["command"] == command, document
    validate_envelope(document)
    if outcome in ErrorCode.__members__:
        assert document["ok"] is False and document["error"]["code"] == outcome, document
    else:
        assert document["ok"] is True, document
        _check_outcome(command, outcome, document["result"])


def _check_outcome(command: str, outcome: str, result: dict[str, Any]) -> None:
    """The row produced the outcome it names (so the optional fields were really seen)."""
    expected: dict[str, Callable[[dict[str, Any]], bool]] = {
        "all, with incomplete and unreadable": lambda r: bool(r["incomplete"]) and bool(r["unreadable"]),
        "by name (resolvedFrom)": lambda r: r.get("resolvedFrom", {}).get("by") == "name",
        "ended": lambda r: r["derived"]["host"] is None,
        "already destroyed": lambda r: r["alreadyDestroyed"] is True,
        "force, group unchecked": lambda r: r.get("groupUnchecked") is True and "warning" in r,
        "foreground": lambda r: r["foreground"] is True,
        "command failed": lambda r: r["completed"] is True and r["exitStatus"] == 3,
        "no wait": lambda r: r["completed"] is False and r["exitStatus"] is None,
        "timed out": lambda r: r["timedOut"] is True,
        "program ended": lambda r: r["ended"] is True and r["exitCode"] == 3,
        "in parts": lambda r: r.get("parts", 0) > 1,
        "screen stable": lambda r: "screenHash" in r,
        "exit of an ended session": lambda r: r["matched"] and "exitCode" in r,
        "output of an ended session": lambda r: r["matched"] and r.get("ended") is True,
        "structured with scrollback": lambda r: "cells" in r and bool(r["scrollback"]),
        "replayed": lambda r: r["source"] == "replay",
        "copied": lambda r: r["copiedTo"] is not None,
        "one command": lambda r: "oneOf" in r,
        "step failed": lambda r: [step["status"] for step in r["steps"]] == ["failed", "not-run"],
    }
    if outcome in expected:
        assert expected[outcome](result), (command, outcome, result)
    if command == "run" and outcome == OK:
        assert result["completed"] and result["output"] == "RAN\n", result


def test_unsafe_home_validates(tmp_path: Path) -> None:
    home = tmp_path / "open"
    home.mkdir()
    home.chmod(0o777)  # any user may change it: nothing in it is obeyed
    done = Cli(home).run("list")
    assert done.code == 8 and done.error["code"] == "UNSAFE_HOME", done.stdout
    validate_envelope(done.doc)


def test_command_help_and_a_bad_command_validate(sessions: Sessions) -> None:
    """`COMMAND --help` answers a CommandHelp for every command; an unknown or missing command
    is a USAGE error for no known command."""
    for command in COMMANDS:
        extra = ["export"] if command == "record" else []
        done = sessions.cli.run(command, *extra, "--help")
        assert done.code == 0, done.stdout
        validate_envelope(done.doc)
        assert set(done.result) == {"usage", "summary", "examples"}
    for args in (["snapshto"], []):
        done = sessions.cli.run(*args)
        assert done.code == 2 and done.error["code"] == "USAGE"
        validate_envelope(done.doc)


@pytest.mark.parametrize("code", sorted(NOT_PRODUCIBLE))
def test_codes_no_input_produces_validate_from_emit_error(code: ErrorCode, tmp_path: Path) -> None:
    program = (
        "import sys\n"
        "from agent_tty.cli.output import GLOBALS, emit_error\n"
        "from agent_tty.protocol.errors import AgentTtyError, ErrorCode\n"
        "GLOBALS.json, GLOBALS.command = True, 'wait'\n"
        f"sys.exit(emit_error(AgentTtyError(ErrorCode.{code.name}, 'built', sessionId='x')))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=tmp_path)
    document = json.loads(done.stdout)
    assert document["error"]["code"] == code.value
    validate_envelope(document)


def test_every_error_code_has_a_row() -> None:
    seen = {outcome for _command, outcome in TABLE} | {UNSAFE_HOME_ROW[1]}
    missing = [code.value for code in ErrorCode if code.value not in seen and code not in NOT_PRODUCIBLE]
    assert not missing, f"error codes without a row in TABLE: {missing}"


def test_every_command_has_a_model_and_a_row() -> None:
    names = set(COMMANDS) | set(OTHER_JSON_COMMANDS)
    assert set(RESULTS) == names, f"without a result model: {names - set(RESULTS)}; unknown: {set(RESULTS) - names}"
    with_ok_row = {command for command, outcome in TABLE if outcome == OK}
    assert with_ok_row == names, f"commands without an ok row in TABLE: {names - with_ok_row}"


def test_inspect_names_every_manifest_field() -> None:
    """inspect's model is open (a newer manifest's field is data); so check here that it names
    every field this version writes."""
    from agent_tty.storage.records import Manifest
    from agent_tty.storage.schema import _camel

    fields = {_camel(name) for name in Manifest.field_names()}
    assert fields <= set(RESULTS["inspect"].model_fields), fields - set(RESULTS["inspect"].model_fields)


def test_a_key_the_schema_does_not_know_fails() -> None:
    """The models are closed: an extra key in a result is an error (what makes the rows above catch
    a new field)."""
    from pydantic import ValidationError

    document = {"ok": True, "command": "mark", "result": {"sessionId": "s", "seq": 1, "label": "m", "surprise": 1}}
    with pytest.raises(ValidationError):
        validate_envelope(document)
