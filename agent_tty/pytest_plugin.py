"""pytest fixtures for testing terminal programs against a real screen.

Installed with agent-tty (entry point `pytest11`), so any test can take:

    def test_prompt(agent_tty_session):
        agent_tty_session.type("python3 -q\\n")
        agent_tty_session.wait(">>> ")
        assert ">>> " in agent_tty_session.snapshot()["lines"][-1]

- `agent_tty_client`: a Client on a private temp Home for this test; every session made in it
  is destroyed at the end (the program's whole group, proven first) and collected, and the
  client is closed (its spare host ends with the test).
- `agent_tty_session`: one live session of that client, `bash --norc --noprofile` in 80×24 unless
  the test says otherwise with `@pytest.mark.agent_tty(argv=[...], cols=..., rows=..., env={...})`
  (any keyword of Client.create); its prompt is `$ `.

The fixtures run the same engine as the CLI; nothing is mocked. This module is imported by
every pytest run where agent-tty is installed: it imports nothing heavy at load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from agent_tty.api import Client, Session

DEFAULT_ARGV = ["bash", "--norc", "--noprofile"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "agent_tty(argv=None, **create): how the agent_tty_session fixture creates its session"
    )


@pytest.fixture
def agent_tty_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    from agent_tty.api import Client

    home = tmp_path_factory.mktemp("agent-tty-home")
    client = Client(home)
    try:
        yield client
    finally:
        try:
            _end_all(client)
        finally:
            client.close()  # its spare host and kept connections: not one per test until pytest exits


@pytest.fixture
def agent_tty_session(agent_tty_client: Client, request: pytest.FixtureRequest) -> Iterator[Session]:
    marker = request.node.get_closest_marker("agent_tty")
    options = dict(marker.kwargs) if marker is not None else {}
    argv = options.pop("argv", None) or (list(marker.args) if marker is not None and marker.args else DEFAULT_ARGV)
    if argv == DEFAULT_ARGV:
        options.setdefault("env", {"PS1": "$ "})  # a prompt a test can wait for
    session = agent_tty_client.create(list(argv), **options)
    yield session  # the client's teardown ends it with the others


def _end_all(client: Client) -> None:
    """Destroy every session of the test's Home (a plain destroy, then --force for one whose host
    does not answer), then collect their folders. A failure here fails the test's teardown:
    a test must not leave a program running."""
    from agent_tty.protocol.errors import AgentTtyError, ErrorCode

    problems = []
    for entry in client.list(all=True)["sessions"]:
        if entry["status"] == "destroyed":
            continue
        session = client.session(entry["sessionId"])
        try:
            session.destroy(force=entry["status"] == "failed")  # a dead host: end what it left
        except AgentTtyError as err:
            if err.code is ErrorCode.SESSION_NOT_FOUND:
                continue
            try:
                session.destroy(force=True)
            except AgentTtyError as forced:
                problems.append(f"{entry['sessionId']}: {forced.code.value} {forced.message}")
    client.gc()
    if problems:
        raise RuntimeError("agent-tty sessions not ended: " + "; ".join(problems))
