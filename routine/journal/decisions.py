"""Decisions on proposals in the run journal: who approved or rejected what, when, and how it ended."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from routine.jsonvalue import Parsed


class Decisions:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def record(self, *, proposal: str, decision: str, outcome: str, by: str, target: str | None = None,
               section: str | None = None, run_id: str | None = None, archived_as: str | None = None,
               detail: str | None = None, at: datetime | None = None) -> None:
        when = (at or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat(timespec="seconds")
        self.db.execute("INSERT INTO decisions (at, proposal, target, section, decision, outcome, by, run_id,"
                        " archived_as, detail) VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (when, proposal, target, section, decision, outcome, by, run_id, archived_as, detail))

    def recent(self, limit: int = 50) -> list[Parsed]:
        return [dict(r) for r in self.db.execute("SELECT * FROM decisions ORDER BY id DESC LIMIT ?", (limit,))]
