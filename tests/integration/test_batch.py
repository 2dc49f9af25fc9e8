"""`batch`: steps in order through the real CLI, API and MCP server, against real sessions."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, wait_until

pytestmark = pytest.mark.integration

LATE_READY = (
    "import sys, time\n"
    "print('READY', flush=True)\n"  # on the screen before any input: a stale match
    "sys.stdin.readline()\n"
    "time.sleep(1.5)\n"  # what the input produces comes well after its echo
    "print('READY', flush=True)\n"
    "time.sleep(300)\n"
)


def bash(cli: Cli) -> str:
    return cli.create("bash", "--norc", "--noprofile", options=("--env", "PS1=$ "))["sessionId"]


def events(cli: Cli, sid: str) -> list[dict[str, Any]]:
    lines = (cli.folder(sid) / "events.jsonl").read_text().splitlines()
    return [event for event in map(json.loads, lines) if "seq" in event]


def inputs(cli: Cli, sid: str) -> list[str]:
    return [event["data"] for event in events(cli, sid) if event["type"] == "input"]


def statuses(result: dict[str, Any]) -> list[str]:
    return [step["status"] for step in result["steps"]]


def test_a_failed_wait_stops_the_steps_after_it(cli: Cli) -> None:
    sid = bash(cli)
    steps = [
        {"kind": "run", "command": "echo one"},
        {"kind": "wait", "text": "NEVER-PRINTED", "timeout": "300ms"},
        {"kind": "type", "text": "echo two\n"},
    ]
    done = cli.run("batch", sid, json.dumps(steps))
    assert done.code == 11, done.stdout  # the first failed step's: a timed-out wait
    result = done.result
    assert statuses(result) == ["completed", "failed", "not-run"]
    assert result["status"] == "failed" and result["failedStep"] == 1 and result["exitCode"] == 11
    ran, waited, skipped = result["steps"]
    assert ran["result"]["output"] == "one\n" and ran["exitCode"] == 0 and isinstance(ran["seq"], int)
    assert waited["baseline"] == ran["seq"], "the wait is anchored at the input step before it"
    assert waited["matched"] is False and waited["timedOut"] is True and len(waited["screenHash"]) == 64
    assert waited["error"]["code"] == "WAIT_TIMEOUT" and waited["exitCode"] == 11
    assert skipped["durationMs"] is None and skipped["result"] is None and skipped["seq"] is None
    assert not any("echo two" in data for data in inputs(cli, sid)), "a step after the failure was sent"


def test_keep_going_runs_the_rest_and_exits_with_the_first_failure(cli: Cli) -> None:
    sid = bash(cli)
    steps = [
        {"kind": "run", "command": "(exit 3)"},
        {"kind": "wait", "text": "NEVER-PRINTED", "timeout": 0.3},
        {"kind": "type", "text": "echo tw''o\n"},
        {"kind": "wait", "regex": "^two$", "timeout": 10},
    ]
    done = cli.run("batch", sid, json.dumps(steps), "--keep-going")
    assert done.code == 12, done.stdout  # run's code for a non-zero status: the first failure
    result = done.result
    assert statuses(result) == ["failed", "failed", "completed", "completed"]
    assert result["failedStep"] == 0
    failed_run = result["steps"][0]
    assert failed_run["error"]["code"] == "COMMAND_FAILED" and failed_run["result"]["exitStatus"] == 3
    assert result["steps"][1]["error"]["code"] == "WAIT_TIMEOUT"
    typed, matched = result["steps"][2:]
    assert matched["baseline"] == typed["seq"] and matched["matched"] is True and matched["timedOut"] is False
    assert "two" in cli.run("snapshot", sid).result["lines"]


def test_a_wait_does_not_match_the_stale_screen_before_the_input(cli: Cli) -> None:
    """READY is on the screen before the input; the wait after it matches only the READY the
    program prints 1.5 s after reading the line, not the one already there."""
    sid = cli.create(sys.executable, "-c", LATE_READY)["sessionId"]
    cli.run("wait", sid, "--text", "READY", "--timeout", "10s")
    steps = [{"kind": "type", "text": "go"}, {"kind": "sendKeys", "keys": ["Enter"]}, {"kind": "wait", "text": "READY", "timeout": 20}]
    done = cli.run("batch", sid, json.dumps(steps))
    assert done.code == 0, done.stdout
    typed, entered, waited = done.result["steps"]
    assert waited["baseline"] == entered["seq"] and waited["matched"] is True
    outputs = [event for event in events(cli, sid) if event["type"] == "output" and event["seq"] > entered["seq"]]
    second = next((event["seq"] for event in outputs if "READY" in event["data"]), None)
    assert second is not None, f"the wait matched the stale READY before the program printed it again: {waited}"
    assert waited["seq"] >= second, (waited, outputs)
    screen = cli.run("snapshot", sid).result
    assert screen["lines"].count("READY") == 2 and waited["screenHash"] == screen["screenHash"]


@pytest.mark.parametrize(
    ("steps", "step", "code", "words"),
    [
        ({"kind": "run", "command": "true"}, None, "USAGE", "JSON array"),
        ([], None, "USAGE", "no steps"),
        ([{"kind": "type", "text": "a"}, {"kind": "send-keys", "keys": ["Enter"]}], 1, "USAGE", "did you mean 'sendKeys'"),
        ([{"kind": "type", "text": "a"}, {"kind": "wait", "text": "x", "stable": 3}], 1, "USAGE", "unknown key 'stable'"),
        ([{"kind": "type", "text": "a"}, {"kind": "type", "text": "b"}, {"kind": "wait", "regex": "("}], 2, "INVALID_INPUT", "invalid regex"),
        ([{"kind": "type", "text": "a"}, {"kind": "wait", "text": "x", "timeout": "soon"}], 1, "INVALID_INPUT", "invalid timeout 'soon'"),
        ([{"kind": "type", "text": "a"}, {"kind": "wait", "text": "x", "idle_ms": 5}], 1, "INVALID_INPUT", "exactly one of"),
        ([{"kind": "type", "text": "a"}, {"kind": "sendKeys", "keys": ["NoSuchKey"]}], 1, "INVALID_INPUT", "NoSuchKey"),
        ([{"kind": "type", "text": "a"}, {"kind": "run", "command": "  "}], 1, "INVALID_INPUT", "empty"),
        ([{"kind": "type", "text": "a"}, "type"], 1, "USAGE", "object"),
    ],
)
def test_a_bad_step_list_is_refused_before_anything_is_sent(cli: Cli, steps: Any, step: int | None, code: str, words: str) -> None:
    sid = bash(cli)
    cli.run("run", sid, "true")  # the shell is at its prompt: nothing else will be typed
    before = inputs(cli, sid)
    done = cli.run("batch", sid, json.dumps(steps))
    assert done.code == 2, done.stdout
    error = done.error
    assert error["code"] == code and words in error["message"], error
    assert error["details"].get("step") == step
    if step is not None:
        assert error["message"].startswith(f"step {step}")
    assert inputs(cli, sid) == before, "a step was sent although the list was refused"


def test_steps_from_a_file_and_one_line_per_step(cli: Cli, tmp_path: Path) -> None:
    sid = bash(cli)
    path = tmp_path / "steps.json"
    steps = [{"kind": "paste", "text": "echo past''ed"}, {"kind": "sendKeys", "keys": ["Enter"]}, {"kind": "wait", "regex": "^pasted$", "timeout": "10s"}]
    path.write_text(json.dumps(steps))
    done = cli.run("batch", sid, "--file", str(path))
    assert done.code == 0 and statuses(done.result) == ["completed"] * 3, done.stdout
    human = cli.run("batch", sid, "--file", str(path), json_out=False)
    assert human.code == 0, human.stderr
    lines = human.stdout.splitlines()
    assert len(lines) == 3 and lines[0].startswith("step 0 (paste): completed") and "matched at seq" in lines[2], lines
    missing = cli.run("batch", sid, "--file", str(tmp_path / "nope.json"))
    assert missing.code == 2 and missing.error["code"] == "INVALID_INPUT"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_flushes_the_records_with_the_step_in_flight_interrupted(cli: Cli, tmp_path: Path, signum: int) -> None:
    sid = bash(cli)
    log = tmp_path / "replay.log"
    steps = [
        {"kind": "type", "text": "echo armed\n"},
        {"kind": "wait", "text": "NEVER-PRINTED", "timeout": 120},
        {"kind": "type", "text": "echo after\n"},
    ]
    # The batch's second read of session.json is its second step's (each step checks the
    # session, as its command does): once it is logged, that step is the one in flight.
    env = cli.replay_env("batch:read:/session.json:2:1", log)
    batch = cli.start("batch", sid, json.dumps(steps), env=env)
    try:
        wait_until(lambda: log.exists() and "release" in log.read_text(), timeout=30, what="the wait step to start")
        batch.send_signal(signum)
        out, err = batch.communicate(timeout=30)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    assert batch.returncode == 128 + signum, (out, err)
    assert "Traceback" not in err
    document = json.loads(out)
    result = document["result"]
    assert document["ok"] is True and result["status"] == "interrupted"
    assert result["interruptedBy"] == signal.Signals(signum).name and result["exitCode"] == 128 + signum
    assert statuses(result) == ["completed", "interrupted", "not-run"]
    assert isinstance(result["steps"][1]["durationMs"], int) and result["steps"][1]["error"] is None
    assert not any("echo after" in data for data in inputs(cli, sid))


def test_the_api_method(cli: Cli) -> None:
    from agent_tty.api import Client

    sid = bash(cli)
    with Client(cli.home, spare_host=False) as client:
        result = client.session(sid).batch([{"kind": "run", "command": "echo api"}, {"kind": "wait", "regex": "^api$"}])
        assert result["status"] == "completed" and result["exitCode"] == 0, result
        assert result["steps"][1]["baseline"] == result["steps"][0]["seq"]
        from agent_tty.api import AgentTtyError

        with pytest.raises(AgentTtyError) as refused:
            client.session(sid).batch('[{"kind": "wait", "text": "x", "screen_stable_ms": -1}]')
        assert refused.value.code.value == "INVALID_INPUT" and refused.value.details["step"] == 0


def test_the_mcp_tool(cli: Cli) -> None:
    pytest.importorskip("mcp")
    import anyio

    from tests.integration.test_mcp import connected

    sid = bash(cli)

    async def main() -> None:
        async with connected(cli) as session:
            steps = [{"kind": "type", "text": "echo mcp\n"}, {"kind": "wait", "regex": "^mcp$", "timeout": 10}, {"kind": "wait", "text": "NEVER", "timeout": 0.2}]
            called = await session.call_tool("batch", {"session_id": sid, "steps": steps})
            assert not called.is_error, called.content
            result = called.structured_content
            assert result["status"] == "failed" and result["exitCode"] == 11 and result["failedStep"] == 2
            assert statuses(result) == ["completed", "completed", "failed"]
            refused = await session.call_tool("batch", {"session_id": sid, "steps": [{"kind": "nope"}]})
            assert refused.is_error and json.loads(refused.content[1].text)["error"]["details"]["step"] == 0

    anyio.run(main)
