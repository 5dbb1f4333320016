"""Token-count samples in the run journal: what we sent, and what the server said it counted."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone


class TokenSamples:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def add(self, model: str, chars: int, fixed: int, reported: int) -> None:
        self.db.execute("INSERT INTO token_samples (at, model, chars, fixed, reported) VALUES (?,?,?,?,?)",
                        (datetime.now(timezone.utc).isoformat(timespec="seconds"), model, chars, fixed, reported))

    def recent(self, model: str, limit: int) -> list[tuple[int, int, int]]:
        rows = self.db.execute("SELECT chars, fixed, reported FROM token_samples WHERE model=?"
                               " ORDER BY id DESC LIMIT ?", (model, limit))
        return [(r[0], r[1], r[2]) for r in rows]
