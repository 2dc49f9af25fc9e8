"""Every command's --json output against one schema: the envelope, and each command's result
with the same keys whatever the outcome (null where unknown)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Cli

pytestmark = pytest.mark.integration

S, I, F, B, L, D, N = str, int, float, bool, list, dict, type(None)
NUM = (int, float)

# command -> (required keys and their types, optional keys and their types)
SCHEMA: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "create": ({"sessionId": S, "status": S, "hostPid": (I, N), "childPid": (I, N), "cols": I, "rows": I, "mechanism": (S, N), "name": (S, N)}, {}),
    "list": ({"sessions": L, "unreadable": L, "incomplete": L}, {}),
    "inspect": ({"sessionId": S, "status": S, "argv": L, "cols": I, "rows": I, "name": (S, N), "mechanism": (S, N), "derived": D}, {"*": object}),
    "resize": ({"sessionId": S, "cols": I, "rows": I, "seq": I}, {}),
    "type": ({"sessionId": S, "seq": I, "bytes": I}, {}),
    "paste": ({"sessionId": S, "seq": I, "bytes": I}, {}),
    "send-keys": ({"sessionId": S, "seq": I, "keys": L}, {}),
    "mark": ({"sessionId": S, "seq": I, "label": S}, {}),
    "wait": ({"sessionId": S, "matched": B, "timedOut": B, "seq": I}, {"screenHash": S, "exitCode": (I, N), "exitSignal": (I, N)}),
    "snapshot": (
        {"sessionId": S, "cols": I, "rows": I, "lines": L, "text": S, "cursor": D, "alternateScreen": B, "title": S,
         "screenHash": S, "seq": I, "backend": S, "source": S},
        {"scrollback": L, "cells": L},
    ),
    "screenshot": (
        {"sessionId": S, "path": S, "sha256": S, "bytes": I, "copiedTo": (S, N), "width": I, "height": I, "seq": I, "screenHash": S, "source": S},
        {},
    ),
    "record": ({"sessionId": S, "format": S, "path": S, "sha256": S, "bytes": I, "events": I, "duration": NUM}, {}),
    "signal": ({"sessionId": S, "signal": S, "delivered": B, "seq": I, "group": I, "foreground": B}, {}),
    "run": (
        {"sessionId": S, "seq": (I, N), "typed": B, "completed": B, "timedOut": B, "ended": B, "exitStatus": (I, N), "markerSeq": (I, N),
         "output": (S, N), "outputTruncated": B, "exitCode": (I, N), "exitSignal": (I, N)},
        {},
    ),
    "gc": ({"removedSessions": L, "skippedSessions": L, "dryRun": B}, {"sweepErrors": L}),
    "version": ({"version": S, "python": S}, {}),
    "help": ({"usage": S, "commands": L}, {}),
    "destroy": (
        {"sessionId": S, "destroyed": B, "alreadyDestroyed": B, "status": S, "exitCode": (I, N), "exitSignal": (I, N)},
        {"manifestUnreadable": S, "groupUnchecked": B, "warning": S},
    ),
    "doctor": ({"python": S, "platform": S, "pty": D, "home": D, "plugins": L, "mechanism": (S, N), "screen": D}, {"*": object}),
}
COMMON_OPTIONAL = {"resolvedFrom": D}


def check(doc: dict[str, Any]) -> None:
    assert set(doc) == ({"ok", "command", "result"} if doc["ok"] else {"ok", "command", "error"}), doc
    if not doc["ok"]:
        error = doc["error"]
        assert set(error) == {"code", "message", "details"} and isinstance(error["code"], str) and isinstance(error["details"], dict)
        return
    required, optional = SCHEMA[doc["command"]]
    result = doc["result"]
    for key, types in required.items():
        assert key in result, (doc["command"], key, result)
        assert isinstance(result[key], types), (doc["command"], key, result[key])
    extra = set(result) - set(required) - set(COMMON_OPTIONAL)
    if "*" not in optional:
        assert extra <= set(optional), (doc["command"], extra)
        for key in extra:
            assert isinstance(result[key], optional[key]), (doc["command"], key)


def test_every_command_matches_the_schema(cli: Cli) -> None:
    def ok(*args: str) -> dict[str, Any]:
        done = cli.run(*args)
        check(done.doc)
        assert done.doc["ok"], done.doc
        return done.doc["result"]

    sid = ok("create", "--name", "shape", "--", "bash", "--norc", "--noprofile")["sessionId"]
    try:
        for args in (
            ["list"], ["list", "--all"], ["inspect", sid], ["resize", sid, "--cols", "90", "--rows", "30"],
            ["type", sid, "x"], ["paste", sid, "y"], ["send-keys", sid, "C-u"], ["mark", sid, "m"],
            ["wait", sid, "--idle-ms", "100"], ["wait", sid, "--screen-stable-ms", "100"], ["snapshot", sid],
            ["snapshot", sid, "--scrollback", "--format", "structured"], ["screenshot", sid], ["record", "export", sid],
            ["signal", sid, "WINCH"], ["gc", "--dry-run"], ["version"], ["--help"], ["doctor"], ["inspect", "shape"],
        ):
            ok(*args)
        # run: one shape for each outcome, and an exit code that tells them apart.
        completed = cli.run("run", sid, "echo RAN", "--timeout", "10s")
        check(completed.doc)
        assert completed.code == 0 and completed.result["completed"] and completed.result["output"] == "RAN\n"
        no_wait = cli.run("run", sid, "sleep 1", "--no-wait")
        check(no_wait.doc)
        assert no_wait.code == 0 and not no_wait.result["completed"] and no_wait.result["exitStatus"] is None
        late = cli.run("run", sid, "sleep 5", "--timeout", "100ms")
        check(late.doc)
        assert late.code == 11 and late.result["timedOut"] and not late.result["completed"]
        cli.run("signal", sid, "INT")
        timed_out = cli.run("wait", sid, "--text", "NEVER-PRINTED", "--timeout", "200ms")
        check(timed_out.doc)
        assert timed_out.code == 11
        for args in (["inspect", "nosuch"], ["wait", sid], ["resize", sid, "--cols", "x"], ["snapshto"], []):
            check(cli.run(*args).doc)
        ended = cli.run("run", sid, "exit 3", "--timeout", "10s")
        check(ended.doc)
        assert ended.code == 4 and ended.result["ended"] and ended.result["exitCode"] == 3 and not ended.result["completed"]
    finally:
        ok("destroy", sid)
    for args in (["destroy", sid], ["snapshot", sid], ["type", sid, "x"], ["wait", sid, "--exit"]):
        check(cli.run(*args).doc)
