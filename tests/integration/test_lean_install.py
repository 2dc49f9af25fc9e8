"""A default install (`pip install agent-tty`, no extras) has no MCP SDK: the CLI and the Python API
work without it, and `agent-tty mcp` says how to install it (MISSING_DEPENDENCY, exit 2), never a
traceback (issue 29.10, ADR 0035).

The install is real: a fresh venv in a temp folder, `pip install` of a copy of this checkout with
its default dependencies, as a user runs it (pip builds the wheel; it reaches the index as
scripts/quickstart does).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_tty.schema import validate_envelope
from tests.conftest import REPO, Cli

pytestmark = pytest.mark.timeout(900)

INSTALL = "pip install 'agent-tty[mcp]'"
SDK = ("mcp", "mcp_types", "starlette", "uvicorn", "sse_starlette", "httpx", "httpx2", "jwt", "multipart")
"""The SDK and the HTTP stack it brought: none of it is in a default install."""


def _ignore(folder: str, names: list[str]) -> set[str]:
    skip = {".git", ".venv", "__pycache__", ".pytest_cache", ".mypy_cache", "build", "dist"}
    dropped = {n for n in names if n in skip or n.endswith(".egg-info")}
    if Path(folder).resolve() in (REPO / "model", REPO / "bench"):
        dropped |= {n for n in names if n in (".cache", "results")}
    return dropped


@pytest.fixture(scope="module")
def lean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a fresh venv holding agent-tty's default install, nothing more."""
    work = tmp_path_factory.mktemp("lean-install")
    source = work / "agent-tty"
    shutil.copytree(REPO, source, ignore=_ignore)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source)],
        capture_output=True,
        text=True,
        timeout=780,
    )
    assert done.returncode == 0, f"pip install of the checkout failed:\n{done.stderr[-3000:]}"
    return venv / "bin"


def test_the_default_install_has_no_mcp_sdk_and_the_cli_and_api_work(lean: Path, cli: Cli) -> None:
    probe = "import importlib.util, json, sys; print(json.dumps([m for m in sys.argv[1:] if importlib.util.find_spec(m)]))"
    found = subprocess.run([str(lean / "python"), "-c", probe, *SDK], capture_output=True, text=True, timeout=60)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == [], f"a default install has the MCP SDK's packages: {found.stdout}"

    # The Python API (`from agent_tty import Client`) drives a real shell without the SDK.
    script = (
        "from agent_tty import Client\n"
        "with Client() as client, client.create(['sh']) as session:\n"
        "    print(session.run('echo lean-$((20+9))', timeout=30)['output'].strip())\n"
    )
    api = subprocess.run([str(lean / "python"), "-c", script], capture_output=True, text=True, env=cli.env(), timeout=120)
    assert api.returncode == 0, api.stderr
    assert api.stdout.strip() == "lean-29", api.stdout
    assert "Traceback" not in api.stderr, api.stderr

    # So does the CLI: its doctor answers (exit 1 only where something here does not work).
    doctor = subprocess.run([str(lean / "agent-tty"), "--json", "doctor"], capture_output=True, text=True, env=cli.env(), timeout=60)
    assert doctor.returncode in (0, 1), doctor.stderr
    assert json.loads(doctor.stdout)["ok"] is True, doctor.stdout


def test_mcp_without_the_sdk_says_how_to_install_it(lean: Path, cli: Cli) -> None:
    # stdin is an MCP client that closed at once: a server that started would exit 0 on it.
    plain = subprocess.run(
        [str(lean / "agent-tty"), "mcp"], stdin=subprocess.DEVNULL, capture_output=True, text=True, env=cli.env(), timeout=60
    )
    assert plain.returncode == 2, (plain.returncode, plain.stdout, plain.stderr)
    assert plain.stdout == "", plain.stdout
    assert "Traceback" not in plain.stderr, plain.stderr
    [line] = plain.stderr.splitlines()
    assert line.startswith("agent-tty mcp: error: ") and line.endswith("[MISSING_DEPENDENCY]"), line
    assert INSTALL in line, line

    enveloped = subprocess.run(
        [str(lean / "agent-tty"), "--json", "mcp", "--idle-timeout", "5m"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=cli.env(),
        timeout=60,
    )
    assert enveloped.returncode == 2, (enveloped.returncode, enveloped.stdout, enveloped.stderr)
    assert "Traceback" not in enveloped.stderr, enveloped.stderr
    document = json.loads(enveloped.stdout)  # exactly one JSON document on stdout
    validate_envelope(document)
    assert document["ok"] is False and document["command"] == "mcp", document
    error = document["error"]
    assert error["code"] == "MISSING_DEPENDENCY", error
    assert INSTALL in error["message"], error
    assert error["details"]["extra"] == "mcp" and error["details"]["install"] == INSTALL, error
    assert error["details"]["module"] in ("mcp", "mcp_types"), error
    assert Path(error["details"]["python"]).parent == lean, error

    # A bad option is still a usage error first (exit 2 USAGE/INVALID_INPUT), and --help needs no SDK.
    bad = subprocess.run(
        [str(lean / "agent-tty"), "--json", "mcp", "--idle-timeout", "soon"], capture_output=True, text=True, env=cli.env(), timeout=60
    )
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["code"] in ("USAGE", "INVALID_INPUT"), bad.stdout
    helped = subprocess.run([str(lean / "agent-tty"), "mcp", "--help"], capture_output=True, text=True, env=cli.env(), timeout=60)
    assert helped.returncode == 0 and "--idle-timeout" in helped.stdout, helped.stderr


def test_video_without_pyav_says_how_to_install_it_and_gif_still_works(lean: Path, cli: Cli) -> None:
    """webm and mp4 need the `video` extra (PyAV, ADR 0044); gif needs only Pillow."""
    video_install = "pip install 'agent-tty[video]'"
    tty = str(lean / "agent-tty")
    for fmt in ("webm", "mp4"):
        done = subprocess.run([tty, "--json", "record", "export", "anysession", "--format", fmt], capture_output=True, text=True, env=cli.env(), timeout=60)
        assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
        document = json.loads(done.stdout)
        validate_envelope(document)
        error = document["error"]
        assert error["code"] == "MISSING_DEPENDENCY" and video_install in error["message"], error
        assert error["details"]["extra"] == "video" and error["details"]["install"] == video_install, error
    doctor = subprocess.run([tty, "--json", "doctor"], capture_output=True, text=True, env=cli.env(), timeout=60)
    video = json.loads(doctor.stdout)["result"]["video"]
    assert video == {"formats": {"gif": True, "webm": False, "mp4": False}, "pyav": None, "install": video_install}, video

    created = subprocess.run([tty, "--json", "create", "--", "sh", "-c", "echo lean-gif"], capture_output=True, text=True, env=cli.env(), timeout=60)
    sid = json.loads(created.stdout)["result"]["sessionId"]
    waited = subprocess.run([tty, "--json", "wait", sid, "--exit", "--timeout", "20000"], capture_output=True, text=True, env=cli.env(), timeout=60)
    assert waited.returncode == 0, waited.stdout
    gif = subprocess.run([tty, "--json", "record", "export", sid, "--format", "gif"], capture_output=True, text=True, env=cli.env(), timeout=120)
    assert gif.returncode == 0, (gif.stdout, gif.stderr)
    result = json.loads(gif.stdout)["result"]
    assert result["format"] == "gif" and result["frames"] >= 1 and Path(result["path"]).read_bytes()[:6] == b"GIF89a", result
