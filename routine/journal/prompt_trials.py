"""Prompt trials as journaled (table ``prompt_trials``, migration ``023_prompt_trials``): per
agent, the version of its note's body that was tried against which variant, on how many runs,
with what figures, and the proposal it led to; the scores of each version of an agent note.
The variants waiting for the daemon's trials window (``prompt_trial_queue``, ``025``): queued
once per (agent, variant), claimed one at a time, put back when a stop cut one short."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import astuple, dataclass, fields
from datetime import datetime
from typing import Any

from routine.journal.stamps import utc_millis, utc_seconds
from routine.jsonvalue import Parsed


def version_of(body: str) -> str:
    """A short hash that names one version of an agent note's body (its instructions)."""
    return hashlib.sha256(body.strip().encode()).hexdigest()[:10]


@dataclass(frozen=True)
class PromptTrial:
    agent: str
    version: str          # the current note's body (version_of)
    variant_version: str
    variant_note: str     # where the variant was read
    runs: int
    current_passed: int
    variant_passed: int
    current_closeness: float | None  # to what the person kept (None: no run's section was edited)
    variant_closeness: float | None
    better: bool
    proposal: str | None  # the proposal to the agent note, when better


class PromptTrials:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def record(self, trial: PromptTrial, at: datetime) -> None:
        names = ", ".join(f.name for f in fields(PromptTrial))
        marks = ", ".join("?" * (len(fields(PromptTrial)) + 1))
        self.db.execute(f"INSERT INTO prompt_trials (at, {names}) VALUES ({marks})",
                        (utc_seconds(at), *astuple(trial)))
        self.db.commit()

    def of(self, agent: str) -> list[Parsed]:
        rows = self.db.execute("SELECT * FROM prompt_trials WHERE agent=? ORDER BY id", (agent,))
        return [dict(r) for r in rows]

    def all(self) -> list[Parsed]:
        """Every prompt trial tried, oldest first (`routine trials list`)."""
        return [dict(r) for r in self.db.execute("SELECT * FROM prompt_trials ORDER BY id")]

    def report(self, since: str) -> str:
        """The trials since ``since`` (UTC ISO) for the Watcher's journal report: what each change
        scored and whether it was proposed ("" when none was tried)."""
        rows = self.db.execute("SELECT * FROM prompt_trials WHERE at >= ? ORDER BY id", (since,)).fetchall()
        lines = [f"- {r['agent']} ({r['variant_note']}): checks passed {r['current_passed']}/{r['runs']} now, "
                 f"{r['variant_passed']}/{r['runs']} with the change{_closeness(r)}; "
                 + (f"proposed in [[{r['proposal'].removesuffix('.md')}]]" if r["proposal"] else
                    "not better, so not proposed") for r in rows]
        return ("**Prompt trials** (changes to agent notes tried on their runs):\n" + "\n".join(lines)) if lines else ""


def _closeness(row: sqlite3.Row) -> str:
    now, new = row["current_closeness"], row["variant_closeness"]
    return "" if now is None or new is None else f", closeness to what was kept {now:.2f} now, {new:.2f} with it"


@dataclass(frozen=True)
class QueuedVariant:
    """A variant of an agent note's body waiting for (or in) the daemon's trials window."""

    agent: str
    body: str
    origin: str            # a variant note's path, or `advice of run ID`
    why: str               # the advice's reason ("" for a variant note)
    since: datetime        # its runs: the agent's step runs in [since, until), or ...
    until: datetime
    run_ids: tuple[str, ...] = ()  # ... these
    id: int = 0


class PromptTrialQueue:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def add(self, variant: QueuedVariant, now: datetime) -> bool:
        """Queue ``variant``; False when this variant of this agent was queued (or tried) before."""
        added = self.db.execute(
            "INSERT OR IGNORE INTO prompt_trial_queue (agent, body, variant_version, origin, why, run_ids, since,"
            " until, status, queued_at) VALUES (?,?,?,?,?,?,?,?,'queued',?)",
            (variant.agent, variant.body, version_of(variant.body), variant.origin, variant.why,
             json.dumps(list(variant.run_ids)) if variant.run_ids else None, utc_millis(variant.since),
             utc_millis(variant.until), utc_millis(now))).rowcount
        self.db.commit()
        return bool(added)

    def status_of(self, agent: str, body: str) -> str | None:
        """Where this variant of ``agent`` stands in the queue (queued, running, done, failed), or None."""
        row = self.db.execute("SELECT status FROM prompt_trial_queue WHERE agent=? AND variant_version=?",
                              (agent, version_of(body))).fetchone()
        return None if row is None else str(row[0])

    def claim(self) -> QueuedVariant | None:
        row = self.db.execute(
            "UPDATE prompt_trial_queue SET status='running' WHERE id=(SELECT id FROM prompt_trial_queue"
            " WHERE status='queued' ORDER BY id LIMIT 1) AND status='queued' RETURNING *").fetchone()
        self.db.commit()
        return None if row is None else _queued(dict(row))

    def end(self, queued_id: int, error: str | None = None) -> None:
        self.db.execute("UPDATE prompt_trial_queue SET status=?, error=? WHERE id=?",
                        ("failed" if error else "done", error, queued_id))
        self.db.commit()

    def requeue_running(self) -> int:
        again = self.db.execute("UPDATE prompt_trial_queue SET status='queued' WHERE status='running'").rowcount
        self.db.commit()
        return again

    def unfinished(self) -> list[dict[str, Any]]:
        """Variants queued, running, or that could not be tried (the tried ones are in ``prompt_trials``)."""
        rows = self.db.execute("SELECT id, agent, origin, status, queued_at, error FROM prompt_trial_queue"
                               " WHERE status != 'done' ORDER BY id")
        return [dict(r) for r in rows]

    def waiting(self) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT id, agent, origin, status, queued_at, error FROM prompt_trial_queue"
                               " WHERE status IN ('queued', 'running') ORDER BY id")
        return [dict(r) for r in rows]


def _queued(row: dict[str, Any]) -> QueuedVariant:
    return QueuedVariant(row["agent"], row["body"], row["origin"], row["why"], datetime.fromisoformat(row["since"]),
                         datetime.fromisoformat(row["until"]), tuple(json.loads(row["run_ids"] or "[]")), row["id"])
