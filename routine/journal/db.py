"""The run journal's SQLite connection. Only routine.journal touches this database."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from routine.journal.migrations import MIGRATIONS


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    db.row_factory = sqlite3.Row
    # WAL: the daemon writes while `routine runs` reads; a crash never corrupts committed rows.
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA busy_timeout=30000")
    migrate(db)
    return db


def migrate(db: sqlite3.Connection) -> list[str]:
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    applied = []
    for name, fn in MIGRATIONS:
        if name in done:
            continue
        db.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated between our read and the lock.
            if db.execute("SELECT 1 FROM _migrations WHERE name=?", (name,)).fetchone():
                db.execute("COMMIT")
                continue
            fn(db)
            db.execute("INSERT INTO _migrations VALUES (?, ?)", (name, datetime.now(timezone.utc).isoformat()))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied
