"""Scheduled slots: claim a (block, slot) once, remember how it ended, find what was missed."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from routine.journal.stamps import utc_seconds
from routine.jsonvalue import Parsed

FINAL = ("done", "failed", "missed", "skipped")


class Slots:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def claim(self, block: str, slot: str) -> bool:
        """True if this caller now owns the slot: new, or retaken after an interruption."""
        try:
            self.db.execute("INSERT INTO slots (block, slot, state, updated_at) VALUES (?,?,?,?)",
                            (block, slot, "claimed", utc_seconds()))
            return True
        except sqlite3.IntegrityError:
            cur = self.db.execute(
                "UPDATE slots SET state='claimed', updated_at=? WHERE block=? AND slot=? AND state='interrupted'",
                (utc_seconds(), block, slot),
            )
            return cur.rowcount == 1

    def retake_failed(self, block: str, slot: str) -> bool:
        """True if a failed slot is now claimed again (its one retry after an outage)."""
        cur = self.db.execute(
            "UPDATE slots SET state='claimed', updated_at=? WHERE block=? AND slot=? AND state='failed'",
            (utc_seconds(), block, slot),
        )
        return cur.rowcount == 1

    def set(self, block: str, slot: str, state: str, run_id: str | None = None, reason: str | None = None) -> None:
        self.db.execute(
            "INSERT INTO slots (block, slot, state, run_id, reason, updated_at) VALUES (?,?,?,?,?,?) "
            "ON CONFLICT(block, slot) DO UPDATE SET state=excluded.state, "
            "run_id=COALESCE(excluded.run_id, slots.run_id), reason=excluded.reason, updated_at=excluded.updated_at",
            (block, slot, state, run_id, reason, utc_seconds()))

    def state(self, block: str, slot: str) -> str | None:
        row = self.db.execute("SELECT state FROM slots WHERE block=? AND slot=?", (block, slot)).fetchone()
        return row[0] if row else None

    def mark_interrupted(self) -> list[tuple[str, str, str | None]]:
        """At start-up: every slot left claimed or running by a dead process was interrupted."""
        rows = self.db.execute("SELECT block, slot, run_id FROM slots WHERE state IN ('claimed','running')").fetchall()
        self.db.execute(
            "UPDATE slots SET state='interrupted', reason='the daemon stopped during this run', updated_at=? "
            "WHERE state IN ('claimed','running')",
            (utc_seconds(),),
        )
        return [tuple(r) for r in rows]

    def last_slot(self, block: str) -> str | None:
        slot: str | None = self.db.execute("SELECT MAX(slot) FROM slots WHERE block=?", (block,)).fetchone()[0]
        return slot

    def interrupted(self, block: str) -> list[str]:
        return [
            r[0]
            for r in self.db.execute(
                "SELECT slot FROM slots WHERE block=? AND state='interrupted' ORDER BY slot", (block,)
            )
        ]

    def seen_since(self, block: str, now: datetime) -> str:
        """When the daemon first knew this block (recorded on first call)."""
        self.db.execute("INSERT OR IGNORE INTO blocks_seen VALUES (?, ?)",
                        (block, utc_seconds(now)))
        since: str = self.db.execute("SELECT since FROM blocks_seen WHERE block=?", (block,)).fetchone()[0]
        return since

    def history(self, block: str | None = None, limit: int = 50) -> list[Parsed]:
        sql = "SELECT * FROM slots" + (" WHERE block=?" if block else "") + " ORDER BY slot DESC LIMIT ?"
        args = (block, limit) if block else (limit,)
        return [dict(r) for r in self.db.execute(sql, args)]
