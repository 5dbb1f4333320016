"""Prompt trials as journaled (table ``prompt_trials``, migration ``023_prompt_trials``): per
agent, the version of its note's body that was tried against which variant, on how many runs,
with what figures, and the proposal it led to; the scores of each version of an agent note."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import astuple, dataclass, fields
from datetime import datetime, timezone


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
                        (at.astimezone(timezone.utc).isoformat(timespec="seconds"), *astuple(trial)))
        self.db.commit()

    def of(self, agent: str) -> list[dict]:
        rows = self.db.execute("SELECT * FROM prompt_trials WHERE agent=? ORDER BY id", (agent,))
        return [dict(r) for r in rows]
