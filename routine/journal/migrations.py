"""Ordered, named migrations of the run journal. Append only: never edit a released one.

Each migration runs once, in order, inside a transaction, and is recorded in `_migrations`.
"""

from __future__ import annotations

import sqlite3


def _script(db: sqlite3.Connection, sql: str) -> None:
    # Not executescript(): it COMMITs first, which would break the migration's transaction.
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


def m001_runs(db: sqlite3.Connection) -> None:
    _script(db, 
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            parent TEXT,                -- the block run a step belongs to
            kind TEXT NOT NULL,         -- step | block
            block TEXT,
            step INTEGER,
            agent TEXT,
            model TEXT,
            trigger TEXT NOT NULL,      -- manual | schedule | catch-up | trigger:<path> | socket
            slot TEXT,                  -- scheduled slot (ISO) for schedule runs
            status TEXT NOT NULL,       -- running | ok | failed | refused | skipped | missed | interrupted | proposal
            error TEXT,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            duration_ms INTEGER,
            task TEXT,
            prompt TEXT,                -- JSON: the exact messages sent
            output TEXT,
            sources TEXT,               -- JSON: vault paths placed in context
            dropped TEXT,               -- JSON: context left out for the budget, with reasons
            wrote TEXT,                 -- JSON: what was written where
            tokens_in INTEGER,
            tokens_out INTEGER,
            load_duration_ms INTEGER,
            details TEXT                -- JSON: anything else (fallbacks, retries, tool log)
        );
        CREATE INDEX runs_started ON runs(started_at);
        CREATE INDEX runs_parent ON runs(parent);
        """
    )


MIGRATIONS = [
    ("001_runs", m001_runs),
]


def m002_slots(db: sqlite3.Connection) -> None:
    # One row per (block, scheduled slot): the primary key is what makes "a slot runs at
    # most once" hold across crashes, restarts and racing timers.
    _script(db, """
        CREATE TABLE slots (
            block TEXT NOT NULL,
            slot TEXT NOT NULL,        -- UTC instant, minute precision (routine.schedule.cron.slot_key)
            state TEXT NOT NULL,       -- claimed | running | done | failed | interrupted | missed | skipped
            run_id TEXT,
            reason TEXT,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (block, slot)
        );
        CREATE TABLE blocks_seen (
            block TEXT PRIMARY KEY,
            since TEXT NOT NULL        -- UTC instant the daemon first knew this block
        )
    """)


MIGRATIONS.append(("002_slots", m002_slots))


def m004_metrics(db: sqlite3.Connection) -> None:
    # Per-run figures (routine.sysmetrics): durations, tokens/s, CPU, memory, tegrastats,
    # version and commit, as one JSON object. (003 is kept for the model residency work.)
    db.execute("ALTER TABLE runs ADD COLUMN metrics TEXT")


MIGRATIONS.append(("004_metrics", m004_metrics))
