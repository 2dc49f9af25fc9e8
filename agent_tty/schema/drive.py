"""Results of the commands that drive a live session: run, type, paste, send-keys, mark, resize, signal."""

from __future__ import annotations

from agent_tty.schema.base import SessionResult, absent, doc


class RunResult(SessionResult):
    """One shape for every outcome (completed, timed out, the program ended, --no-wait): the
    same keys, null where unknown. The exit code tells them apart: 0, 11 (timedOut), 4 (ended)."""

    seq: int | None = doc("The event seq of the typed command line; null when it was never typed.")
    typed: bool = doc("Whether the line was typed: false when the shell did not come back to read it within --timeout (nothing typed; ADR 0031).")
    completed: bool = doc("Whether the command completed (its hidden completion marker was seen).")
    timedOut: bool = doc("Whether --timeout passed before it completed (exit 11).")
    ended: bool = doc("Whether the program ended before the command completed (exit 4).")
    exitStatus: int | None = doc("The command's exit status ($?), null unless completed.")
    markerSeq: int | None = doc("The event seq at which the completion marker was seen, else null.")
    output: str | None = doc("What the command printed (its echo left out), null when unknown.")
    outputTruncated: bool = doc("Whether `output` holds only the last part of what was printed.")
    exitCode: int | None = doc("The program's exit code when it ended, else null.")
    exitSignal: int | None = doc("The signal that ended the program, else null.")


class InputResult(SessionResult):
    seq: int = doc("The event seq of the (last part of the) input.")
    bytes: int = doc("Bytes sent to the program (with the paste brackets, if any).")
    firstSeq: int = absent("A long input sent in parts: the seq of its first part (absent otherwise).")
    parts: int = absent("A long input sent in parts: how many (absent otherwise).")


class KeysResult(SessionResult):
    seq: int = doc("The event seq of the keys' input.")
    keys: list[str] = doc("The key names, as given.")


class MarkResult(SessionResult):
    seq: int = doc("The event seq of the marker.")
    label: str = doc("The marker's label.")


class ResizeResult(SessionResult):
    cols: int = doc("The new width.")
    rows: int = doc("The new height.")
    seq: int = doc("The event seq of the resize.")


class SignalResult(SessionResult):
    signal: str = doc("The signal's name (INT, TERM, ...) or its number.")
    delivered: bool = doc("Whether it was delivered (a group it could not prove the program's is not signalled).")
    seq: int = doc("The event seq of the signal.")
    group: int = doc("The process group it went to.")
    foreground: bool = doc("True for a keyboard signal sent to the terminal's foreground job.")
