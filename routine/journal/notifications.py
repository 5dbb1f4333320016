"""Notifications in the run journal (table ``notifications``): one row per key, so a message is
sent once; held ones wait for the end of quiet hours; failures are kept and counted."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from routine.journal.stamps import utc_seconds
from routine.redact import redact_text


class Delivery(str, Enum):
    SENDING = "sending"
    SENT = "sent"
    HELD = "held"  # quiet hours: sent when they end
    FAILED = "failed"  # every URL refused or was unreachable; never fails a run

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Stored:
    key: str
    topic: str
    title: str
    body: str
    status: Delivery


class NotificationLog:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def claim(self, key: str, topic: str, title: str, body: str, at: datetime, status: Delivery) -> bool:
        """Record a message under ``key``; False when that key was recorded before (sent once)."""
        cur = self.db.execute("INSERT OR IGNORE INTO notifications (key, topic, title, body, at, status)"
                              " VALUES (?,?,?,?,?,?)",
                              (key, topic, redact_text(title), redact_text(body), utc_seconds(at), status.value))
        return cur.rowcount == 1

    def settle(self, key: str, status: Delivery, at: datetime, error: str | None = None) -> None:
        self.db.execute("UPDATE notifications SET status=?, sent_at=?, error=? WHERE key=?",
                        (status.value, utc_seconds(at) if status is Delivery.SENT else None,
                         redact_text(error) if error else None, key))

    def held(self) -> list[Stored]:
        rows = self.db.execute("SELECT key, topic, title, body, status FROM notifications WHERE status=?"
                               " ORDER BY at", (Delivery.HELD.value,))
        return [Stored(r[0], r[1], r[2], r[3], Delivery(r[4])) for r in rows]

    def counts(self) -> dict[str, int]:
        return {r[0]: r[1] for r in self.db.execute("SELECT status, COUNT(*) FROM notifications GROUP BY status")}

    def recent(self, limit: int) -> list[dict[str, str | None]]:
        rows = self.db.execute("SELECT at, topic, title, status, error FROM notifications ORDER BY at DESC, rowid DESC"
                               " LIMIT ?", (limit,))
        return [{"at": r[0], "topic": r[1], "title": r[2], "status": r[3], "error": r[4]} for r in rows]
