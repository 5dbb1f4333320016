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

    def __str__(self) -> str:  # "ok", as the journal and every output write it (also in f-strings)
        return self.value

    @property
    def succeeded(self) -> bool:
        return self in (RunStatus.OK, RunStatus.PROPOSAL)


def succeeded(status: str | None) -> bool:
    """Whether a run (or block) with this journaled status did its job; unknown statuses did not."""
    try:
        return RunStatus(status).succeeded
    except ValueError:
        return False
