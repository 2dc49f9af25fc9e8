"""run's checks of the line it types (agent_tty/host/run_line.py)."""

from __future__ import annotations

import pytest

from agent_tty.host.run_line import check_run_line, ends_in_comment
from agent_tty.protocol.errors import AgentTtyError, ErrorCode


@pytest.mark.parametrize(
    ("command", "comment"),
    [
        ("echo a # c", True), ("# only", True), ("ls;#c", True), ("a|#", True), ("x\n# c", True),
        ("echo 'it''s' #", True), ("echo a#b", False), ("echo '#'", False), ('echo "# x"', False),
        ("echo ${#x}", False), ("echo $#", False), ("echo a \\# b", False), ("# c\nx", False),
        ("echo 'a\n# b'", False), ("python3 -c '\n# x\nprint(1)'", False), ('echo "x\n#" # y', True),
    ],
)  # fmt: skip
def test_a_comment_is_found_as_sh_finds_it(command: str, comment: bool) -> None:
    assert ends_in_comment(command) is comment


def test_a_known_non_shell_is_refused_and_an_unknown_program_is_not() -> None:
    for name in ("python3", "python3.11", "node", "vim"):
        with pytest.raises(AgentTtyError) as caught:
            check_run_line("print(1)", name)
        assert caught.value.code is ErrorCode.INVALID_INPUT and caught.value.details["foreground"] == name
    for name in ("bash", "ssh", "sudo", "docker", None):
        check_run_line("echo ok", name)
