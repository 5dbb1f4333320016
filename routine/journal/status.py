"""A run's status, typed, and the one answer to "did it succeed"."""

from __future__ import annotations

from enum import Enum


class RunStatus(str, Enum):
    RUNNING = "running"
    OK = "ok"
    PROPOSAL = "proposal"  # written as a proposal in Drafts/: the person decides
    FAILED = "failed"
    REFUSED = "refused"  # outside the agent's scopes
    SKIPPED = "skipped"  # a step after a failed one
    MISSED = "missed"  # due while the daemon was down, past its grace
    INTERRUPTED = "interrupted"  # the daemon stopped during it
    TIMEOUT = "timeout"  # a tool loop ran out of time
    MAX_ITERATIONS = "max-iterations"  # a tool loop ran out of turns
    DRY_RUN = "dry-run"
    ANSWERED = "answered"  # a step that asked and was answered: the step ran again with the answer
    WAITING = "waiting"  # a block's step asked the person and waits for the answer (routine.flows.questions)

    def __str__(self) -> str:  # "ok", as the journal and every output write it (also in f-strings)
        return self.value

    @property
    def succeeded(self) -> bool:
        return self in (RunStatus.OK, RunStatus.PROPOSAL)


class Skip(str, Enum):
    """Why a run was skipped, kept in its ``details.skipped``: each is shown apart (`skipped: paused`)."""

    PAUSED = "paused"  # `routine pause`, or a holiday
    BRANCH = "branch"  # a conditional handoff not taken
    AFTER_FAILURE = "after failure"  # an earlier step of the block failed
    MISSED = "missed"  # the block says `missed: skip`
    NO_ANSWER = "no answer"  # a question's deadline passed without an answer or a default

    def __str__(self) -> str:
        return self.value


def outcome(status: str, details: object = None, error: str | None = None) -> str:
    """A run's status as the person reads it: a skip with its reason, a failure's `!` when it has an error."""
    reason = details.get("skipped") if isinstance(details, dict) else None
    question = details.get("question") if isinstance(details, dict) else None
    if status == RunStatus.WAITING.value and question:  # on the person: `routine answer ID TEXT`
        return f"waiting: {question}"
    if status == RunStatus.SKIPPED.value:
        return f"skipped: {reason}" if reason else "skipped"
    return f"{status}!" if error else status


def succeeded(status: str | None) -> bool:
    """Whether a run (or block) with this journaled status did its job; unknown statuses did not."""
    try:
        return RunStatus(status).succeeded
    except ValueError:
        return False
