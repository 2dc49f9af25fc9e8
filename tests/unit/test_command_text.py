"""command_text: a multi-line run's output without the echoes of its later lines (issue 29.3).
The byte strings are what bash and zsh printed for these commands in a real session."""

from __future__ import annotations

from agent_tty.terminal.output import command_text, plain_text

ZSH_PROMPT_SP = "\x1b[1m\x1b[7m#\x1b[27m\x1b[1m\x1b[0m" + " " * 79 + "\r \r\r\x1b[0m\x1b[27m\x1b[24m\x1b[J"


def test_bash_lines_and_their_prompts_go() -> None:
    printed = b"a\r\nroot@vm:/tmp# echo b\r\n\x1b[?2004l\rb\r\n"
    assert command_text(printed, ["echo b"]) == "a\nb\n"
    assert plain_text(printed) == "a\nroot@vm:/tmp# echo b\nb\n", "what it was before"


def test_zsh_prompt_sp_and_continuation_prompts_go() -> None:
    printed = (
        "a\r\n" + ZSH_PROMPT_SP + "vm# \x1b[K\x1b[?2004hf\x08for i in 1 2\x1b[?2004l\r\r\n"
        "\r\x1b[0m\x1b[27m\x1b[24m\x1b[Jfor> \x1b[K\x1b[?2004hd\x08do echo n$i\x1b[?2004l\r\r\n"
        "\r\x1b[0m\x1b[27m\x1b[24m\x1b[Jfor> \x1b[K\x1b[?2004hd\x08done\x1b[?2004l\r\r\nn1\r\nn2\r\n"
    ).encode()
    assert command_text(printed, ["for i in 1 2", "do echo n$i", "done"]) == "a\nn1\nn2\n"


def test_a_blank_line_goes_as_the_prompt_it_draws() -> None:
    printed = b"y\r\nroot@box:/tmp# \r\n\x1b[?2004l\rroot@box:/tmp# echo z\r\nz\r\n"
    assert command_text(printed, ["", "echo z"]) == "y\nz\n"


def test_output_that_looks_like_a_later_line_is_kept_before_its_echo_is_found() -> None:
    # The echo of line 2 is searched from the start; output before it that ends with the same
    # text would be taken for it (a limit, docs/USAGE.md), but output after it never is.
    printed = b"one\r\n$ echo two\r\ntwo\r\n$ echo two\r\ntwo\r\n"
    assert command_text(printed, ["echo two", "echo two"]) == "one\ntwo\ntwo\n"
    assert command_text(b"echo two\r\n", ["not here"]) == "echo two\n", "an echo not found: nothing goes"
