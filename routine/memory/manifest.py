"""The index's own bookkeeping, in SQLite beside the vectors: what was indexed from which note.

``notes`` holds each note's size, modification time and content hash, so an unchanged note
costs one stat. ``chunks`` holds every chunk id that may be in the vector store: a row is
written (``stored = 0``) before its vectors are, and marked ``stored = 1`` after, so after a
kill -9 every vector in the store is known here and nothing half-done is trusted.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
                                  sha TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (id TEXT PRIMARY KEY, path TEXT NOT NULL, sha TEXT NOT NULL,
                                   stored INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_sha ON chunks(sha);
"""


class Manifest:
    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def sound(self) -> bool:
        with self._lock:
            return bool(self._db.execute("PRAGMA quick_check").fetchone()[0] == "ok")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _rows(self, sql: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    # --- reading ---------------------------------------------------------------------------

    def notes(self) -> dict[str, tuple[int, int, str]]:
        """path -> (mtime_ns, size, sha) of every note indexed."""
        return {p: (m, s, h) for p, m, s, h in self._rows("SELECT path, mtime_ns, size, sha FROM notes")}

    def chunk_ids(self, path: str) -> dict[str, int]:
        """id -> stored, for the chunks recorded of one note."""
        return dict(self._rows("SELECT id, stored FROM chunks WHERE path = ?", (path,)))

    def stored_ids_by_sha(self, shas: list[str]) -> dict[str, str]:
        """For each chunk text hash, one chunk whose vector is stored (to reuse it)."""
        found: dict[str, str] = {}
        for start in range(0, len(shas), 500):
            part = shas[start:start + 500]
            marks = ",".join("?" * len(part))
            for chunk_id, sha in self._rows(f"SELECT id, sha FROM chunks WHERE stored = 1 AND sha IN ({marks})", part):
                found.setdefault(sha, chunk_id)
        return found

    def indexed_paths(self) -> list[str]:
        return [p for (p,) in self._rows("SELECT DISTINCT path FROM chunks WHERE stored = 1")]

    def all_chunks(self) -> dict[str, tuple[str, int]]:
        """id -> (path, stored)."""
        return {i: (p, s) for i, p, s in self._rows("SELECT id, path, stored FROM chunks")}

    def counts(self) -> tuple[int, int]:
        """(notes, stored chunks)."""
        notes = self._rows("SELECT COUNT(*) FROM notes")[0][0]
        chunks = self._rows("SELECT COUNT(*) FROM chunks WHERE stored = 1")[0][0]
        return notes, chunks

    # --- writing ---------------------------------------------------------------------------

    def intend(self, rows: list[tuple[str, str, str]]) -> None:
        """Record (id, path, sha) of chunks about to be written to the vector store."""
        with self.transaction() as db:
            db.executemany("INSERT OR IGNORE INTO chunks (id, path, sha, stored) VALUES (?, ?, ?, 0)", rows)

    def settle(self, stored: list[str], dropped: list[str], notes: list[tuple[str, int, int, str]],
               forgotten: Sequence[str] = ()) -> None:
        """After the vector store took a batch: what it holds now, and each note's new state."""
        with self.transaction() as db:
            db.executemany("UPDATE chunks SET stored = 1 WHERE id = ?", [(i,) for i in stored])
            db.executemany("DELETE FROM chunks WHERE id = ?", [(i,) for i in dropped])
            db.executemany("INSERT OR REPLACE INTO notes (path, mtime_ns, size, sha) VALUES (?, ?, ?, ?)", notes)
            db.executemany("DELETE FROM notes WHERE path = ?", [(p,) for p in forgotten])

    def restate(self, stored: set[str], lost_paths: set[str]) -> None:
        """After a crash: mark exactly ``stored`` as stored, and forget the notes that lost chunks."""
        with self.transaction() as db:
            db.execute("UPDATE chunks SET stored = 0")
            db.executemany("UPDATE chunks SET stored = 1 WHERE id = ?", [(i,) for i in stored])
            db.executemany("DELETE FROM notes WHERE path = ?", [(p,) for p in lost_paths])
