"""`run` with real shells: a line typed before the shell reads is never echoed twice, so the
completion marker never shows (issue 29.1, ADR 0031).

The other run tests use `bash --norc`, which reads at once. A shell with a `.bashrc` (pyenv's
init, a slow `PROMPT_COMMAND`) is still busy when `run` comes: straight after `create`, and
right after the previous run's marker. Each variant gets the first move through the CLI, then
30 back-to-back runs through the API, with a line that wraps at 80 columns among them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import Cli

pytestmark = pytest.mark.integration
LEAKS = ("7770", "\\033]", "printf '")
RUNS = 30
WIDE = "x" * 90

BASHRC = """\
sleep 0.3                       # a slow init (pyenv, nvm, conda)
PROMPT_COMMAND='sleep 0.2'      # a slow prompt (starship, git status)
PS1='\\u@box:\\w\\$ '
"""
ZSHRC = """\
sleep 0.3
precmd() { sleep 0.2; }
PROMPT='%n@box %~ %# '
"""


def variants() -> list[tuple[str, tuple[str, ...]]]:
    found = [("bash-rc", ("bash",)), ("bash-i", ("bash", "-i")), ("dash", ("dash",))]
    if shutil.which("zsh"):
        found.append(("zsh-rc", ("zsh",)))
    return found


def busy_shell(cli: Cli, tmp_path: Path, variant: str) -> str:
    """The variant's shell, created with a HOME whose rc files make it slow to read."""
    user_home = tmp_path / "user"
    user_home.mkdir()
    (user_home / ".bashrc").write_text(BASHRC)
    (user_home / ".zshrc").write_text(ZSHRC)
    argv = dict(variants())[variant]
    return cli.create(*argv, options=("--env", f"HOME={user_home}", "--env", "ENV="))["sessionId"]


def leaked(text: str) -> bool:
    return any(part in text for part in LEAKS)


@pytest.mark.parametrize("variant", [name for name, _ in variants()])
def test_no_run_shows_its_marker_in_a_shell_that_is_busy_when_run_comes(cli: Cli, tmp_path: Path, variant: str) -> None:
    from agent_tty.api import Client

    sid = busy_shell(cli, tmp_path, variant)

    first = cli.run("run", sid, "echo first")  # the first move: the shell is still in its rc
    assert first.code == 0, first.stderr
    assert first.result["output"].strip() == "first", first.result

    bad: list[tuple[int, str]] = []
    with Client(home=str(cli.home)) as client:
        session = client.session(sid)
        for i in range(RUNS):
            word = WIDE if i % 10 == 5 else f"hi{i}"
            result = session.run(f"echo {word}", timeout=30)
            assert result["completed"], result
            if result["output"].strip() != word:
                bad.append((i, result["output"]))
        lines = session.snapshot(scrollback=True)
        shown = [line for line in [*lines["scrollback"], *lines["lines"]] if leaked(line)]
    assert not bad, f"outputs with more than the command printed: {bad[:3]}"
    assert not shown, f"the screen shows the marker: {shown[:3]}"


def test_a_run_whose_shell_does_not_read_in_time_is_not_typed(cli: Cli, tmp_path: Path) -> None:
    sid = cli.create("bash", "--norc", "--noprofile", options=("--env", "PS1=$ "))["sessionId"]
    assert cli.run("run", sid, "true").code == 0  # the host has now seen bash's line editor
    assert cli.run("run", sid, "sleep 3", "--no-wait").code == 0
    late = cli.run("run", sid, "echo never-typed", "--timeout", "1")
    assert late.code == 11, late.stderr
    assert late.result["timedOut"] and not late.result["typed"] and late.result["seq"] is None, late.result
    after = cli.run("run", sid, "echo next", "--timeout", "20")  # typed once sleep is done
    assert after.code == 0 and after.result["output"].strip() == "next", after.result
    log = cli.run("record", "export", sid, json_out=False)
    assert "never-typed" not in log.stdout


MULTI_LINE = [
    ("echo a\necho b", "a\nb\n"),
    ("for i in 1 2\ndo echo n$i\ndone", "n1\nn2\n"),
    ("cat <<EOF\nhello\nEOF\necho after", "hello\nafter\n"),
    ("echo y\n\necho z", "y\nz\n"),
]


@pytest.mark.parametrize("variant", [name for name, _ in variants()])
def test_a_multi_line_run_returns_the_output_of_every_line(cli: Cli, tmp_path: Path, variant: str) -> None:
    """Issue 29.3: `run 'echo a\\necho b'` returned only `b`. Its output now starts after its
    first line's echo and leaves out the echo (and prompt) of each later line; `--file` too."""
    sid = busy_shell(cli, tmp_path, variant)
    script = tmp_path / "script.sh"
    script.write_text("echo from-file-1\necho from-file-2\n")
    outputs = []
    for command, _expected in MULTI_LINE:
        done = cli.run("run", sid, command)
        assert done.code == 0 and done.result["completed"], done.stdout
        outputs.append(done.result["output"])
    from_file = cli.run("run", sid, "--file", str(script)).result["output"]
    if variant == "dash":
        # No line editor: the kernel echoes every line at once and dash prints its prompts
        # (PS1, PS2) when it reads each; they stay in the output (docs/USAGE.md, run).
        for output, (_command, expected) in zip(outputs, MULTI_LINE):
            assert all(line in output for line in expected.split()), (output, expected)
        assert "from-file-1" in from_file and from_file.endswith("from-file-2\n"), from_file
        return
    assert outputs == [expected for _command, expected in MULTI_LINE]
    assert from_file == "from-file-1\nfrom-file-2\n"
