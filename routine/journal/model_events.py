"""Model loads and unloads in the run journal: what the residency manager did, and why."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from routine.journal.stamps import utc_millis
from routine.jsonvalue import Parsed


class ModelEvents:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def record(self, *, host: str, model: str, event: str, reason: str, alias: str | None = None,
               load_duration_ms: int | None = None, run_id: str | None = None, at: datetime | None = None) -> None:
        self.db.execute("INSERT INTO model_events (at, host, model, alias, event, reason, load_duration_ms, run_id)"
                        " VALUES (?,?,?,?,?,?,?,?)",
                        (utc_millis(at), host, model, alias, event, reason, load_duration_ms, run_id))

    def recent(self, limit: int = 50, since: str | None = None) -> list[Parsed]:
        sql = "SELECT * FROM model_events" + (" WHERE at >= ?" if since else "") + " ORDER BY id DESC LIMIT ?"
        args = (since, limit) if since else (limit,)
        return [dict(r) for r in self.db.execute(sql, args)]

    def last_load(self, host: str, model: str) -> Parsed | None:
        """Our last load of ``model`` on ``host`` if nothing unloaded it since (so it is ours)."""
        row = self.db.execute("SELECT * FROM model_events WHERE host=? AND model=? ORDER BY id DESC LIMIT 1",
                              (host, model)).fetchone()
        return dict(row) if row and row["event"] == "load" else None

    def load_durations_ms(self, host: str, model: str, limit: int = 10) -> list[int]:
        """Recent real loads (not touches of a resident model), newest first."""
        rows = self.db.execute("SELECT load_duration_ms FROM model_events WHERE host=? AND model=? AND event='load'"
                               " AND load_duration_ms IS NOT NULL ORDER BY id DESC LIMIT ?", (host, model, limit))
        return [r[0] for r in rows]
