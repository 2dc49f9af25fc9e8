"""The result of `batch`: one record per step, in the order given."""

from __future__ import annotations

from typing import Any, Literal

from agent_tty.schema.base import Model, SessionResult, doc
from agent_tty.schema.envelope import ErrorBody


class StepRecord(Model):
    """Every step has every key, null where it does not apply or the step did not run."""

    index: int = doc("The step's place in the list, from 0.")
    kind: Literal["run", "type", "paste", "sendKeys", "wait"] = doc("The step's kind.")
    status: Literal["completed", "failed", "not-run", "interrupted"] = doc(
        "completed; failed (`error` says why); not-run (after a failure without --keep-going, or after an interruption); "
        "interrupted (in flight when SIGINT or SIGTERM came)."
    )
    durationMs: int | None = doc("How long the step took, in milliseconds; null when it did not run.")
    seq: int | None = doc("An input step: the event seq of its input (a wait's baseline); a wait: the last event seq when it ended.")
    baseline: int | Literal["last"] | None = doc(
        "A wait: the seq its matches must be new after (the latest input step before it, or its own after_seq); null: none."
    )
    matched: bool | None = doc("A wait: whether its condition held; null for an input step.")
    timedOut: bool | None = doc("A wait: whether its timeout passed first; null for an input step.")
    screenHash: str | None = doc("A wait: sha256 of the visible text it was judged on, as snapshot's; else null.")
    exitCode: int | None = doc("The exit code the step's command would have had alone (0 when completed); null when it did not end.")
    error: ErrorBody | None = doc("A failed step: the error its command reports (a timed-out wait is WAIT_TIMEOUT); else null.")
    result: dict[str, Any] | None = doc("The step's command's own --json result (run's output, ...); null when it raised or did not run.")


class BatchResult(SessionResult):
    """The exit code is 0 when every step completed, else the first failed step's (an interruption: 130 or 143)."""

    status: Literal["completed", "failed", "interrupted"] = doc("completed: every step did; failed: at least one failed; interrupted: SIGINT or SIGTERM.")
    exitCode: int = doc("The batch's exit code: 0, the first failed step's exit code, or 128 + the signal's number.")
    failedStep: int | None = doc("The index of the first failed step, else null.")
    interruptedBy: Literal["SIGINT", "SIGTERM"] | None = doc("The signal that interrupted the batch, else null.")
    steps: list[StepRecord] = doc("One record per step given, in order.")
