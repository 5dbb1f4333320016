"""The run journal's SQLite connection. Only routine.journal touches this database.

A damaged journal is set aside and a new one started (``routine.statedb``): the journal is
history, the vault is the truth, and a daemon that cannot start is worse than a lost history."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from routine.journal.migrations import MIGRATIONS
from routine.statedb import open_sqlite


def connect(path: Path) -> sqlite3.Connection:
    return open_sqlite(path, _setup)


def _setup(db: sqlite3.Connection) -> None:
    db.row_factory = sqlite3.Row
    # WAL: the daemon writes while `routine runs` reads; a crash never corrupts committed rows.
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA busy_timeout=30000")
    migrate(db)


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
