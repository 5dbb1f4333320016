"""Decisions on proposals in the run journal: who approved or rejected what, when, and how it ended."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from enum import Enum

from routine.journal.stamps import utc_seconds
from routine.jsonvalue import Parsed


class Outcome(str, Enum):
    """How a decision on a proposal ended (``Decided.outcome``; journaled as its value)."""

    APPLIED = "applied"
    REJECTED = "rejected"
    CONFLICT = "conflict"      # the target changed: nothing applied
    REFUSED = "refused"        # not routine's, its agent gone, or outside its scopes
    UNDECIDED = "undecided"    # not open, or not decided yet
    FAILED = "failed"          # the daemon could not decide it (the control socket's answer)

    def __str__(self) -> str:
        return self.value

    @property
    def settled(self) -> bool:
        """The proposal left the drafts (applied or rejected): the command succeeded."""
        return self in (Outcome.APPLIED, Outcome.REJECTED)


class Decisions:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def record(self, *, proposal: str, decision: str, outcome: Outcome, by: str, target: str | None = None,
               section: str | None = None, run_id: str | None = None, archived_as: str | None = None,
               detail: str | None = None, at: datetime | None = None) -> None:
        when = utc_seconds(at)
        self.db.execute("INSERT INTO decisions (at, proposal, target, section, decision, outcome, by, run_id,"
                        " archived_as, detail) VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (when, proposal, target, section, decision, outcome, by, run_id, archived_as, detail))

    def recent(self, limit: int = 50) -> list[Parsed]:
        return [dict(r) for r in self.db.execute("SELECT * FROM decisions ORDER BY id DESC LIMIT ?", (limit,))]
