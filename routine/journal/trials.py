"""Trials of a candidate model on real runs' requests (issue 28; table ``trials``, migration
``019_trials``): queued, claimed one at a time, finished with the answer and its verdicts beside
the run it replays. A (run, candidate) pair is tried at most once."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

from routine.journal.runs import RunRecord
from routine.journal.stamps import utc_millis


class TrialStatus(str, Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class Trial:
    """One row of ``trials``; ``result`` decoded (the verdicts and figures, once done)."""

    id: int
    run: str
    candidate: str
    agent: str | None
    original_model: str | None
    status: TrialStatus
    queued_at: str
    started_at: str | None = None
    ended_at: str | None = None
    model: str | None = None
    answer: str | None = None
    result: dict[str, Any] | None = None
    error: str | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> "Trial":
        values = dict(row)
        values["status"] = TrialStatus(values["status"])
        values["result"] = json.loads(values["result"]) if values.get("result") else None
        return cls(**values)


class Trials:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def queue(self, runs: list[tuple[str, str | None, str | None]], candidate: str) -> tuple[int, int]:
        """Queue ``candidate`` on each (run id, agent, run's model); (queued, already done or queued)."""
        added = 0
        for run_id, agent, model in runs:
            # A failed trial (the server was away) may be queued again; a done one never is.
            cursor = self.db.execute(
                "INSERT INTO trials (run, candidate, agent, original_model, status, queued_at) VALUES (?,?,?,?,?,?)"
                " ON CONFLICT (run, candidate) DO UPDATE SET status='queued', queued_at=excluded.queued_at,"
                " error=NULL WHERE trials.status='failed'",
                (run_id, candidate, agent, model, TrialStatus.QUEUED.value, utc_millis()))
            added += cursor.rowcount
        return added, len(runs) - added

    def pending(self) -> int:
        row = self.db.execute("SELECT COUNT(*) FROM trials WHERE status IN ('queued', 'running')").fetchone()
        return int(row[0])

    def claim(self) -> Trial | None:
        """The oldest queued trial, marked running (in one statement: no two claim the same)."""
        row = self.db.execute(
            "UPDATE trials SET status='running', started_at=? WHERE id=(SELECT id FROM trials WHERE status='queued'"
            " ORDER BY id LIMIT 1) AND status='queued' RETURNING *", (utc_millis(),)).fetchone()
        return Trial.from_row(row) if row is not None else None

    def finish(self, trial_id: int, *, model: str | None, answer: str | None, result: dict[str, Any]) -> None:
        self.db.execute("UPDATE trials SET status='done', ended_at=?, model=?, answer=?, result=?, error=NULL"
                        " WHERE id=?", (utc_millis(), model, answer, json.dumps(result, ensure_ascii=False), trial_id))

    def fail(self, trial_id: int, error: str) -> None:
        self.db.execute("UPDATE trials SET status='failed', ended_at=?, error=? WHERE id=?",
                        (utc_millis(), error, trial_id))

    def requeue_running(self) -> int:
        """At start-up: trials a stopped process left running go back to the queue (they stored
        nothing: a result is written in one statement at the end)."""
        return self.db.execute("UPDATE trials SET status='queued', started_at=NULL WHERE status='running'").rowcount

    def get(self, trial_id: int) -> Trial:
        return Trial.from_row(self.db.execute("SELECT * FROM trials WHERE id=?", (trial_id,)).fetchone())

    def all(self, status: TrialStatus | None = None) -> list[Trial]:
        if status is None:
            rows = self.db.execute("SELECT * FROM trials ORDER BY id")
        else:
            rows = self.db.execute("SELECT * FROM trials WHERE status=? ORDER BY id", (status.value,))
        return [Trial.from_row(r) for r in rows]


def replayable(db: sqlite3.Connection, since: datetime, until: datetime) -> list[RunRecord]:
    """Step runs that started in [since, until) and sent a model a request that was answered
    (ok, or a proposal): the runs a trial can replay, oldest first."""
    rows = db.execute(
        "SELECT * FROM runs WHERE kind='step' AND status IN ('ok', 'proposal') AND prompt IS NOT NULL"
        " AND agent IS NOT NULL AND started_at >= ? AND started_at < ? ORDER BY started_at, id",
        (utc_millis(since), utc_millis(until)))
    return [RunRecord.from_row(r) for r in rows]

