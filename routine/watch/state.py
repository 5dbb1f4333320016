"""What the watcher last knew of each note (mtime, size, content hash), kept in the journal
database so it survives restarts. Reads are from memory; every change is written through.
When the state disk is full the memory stays right and the write is skipped (logged once): the
start-up reconcile compares hashes, so a stale record only costs a re-read."""

from __future__ import annotations

import logging
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from routine.causes import is_disk_full
from routine.journal import Journal

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FileState:
    mtime_ns: int | None  # None: routine wrote it and has not looked at it since
    size: int | None
    sha: str


class FileStates:
    def __init__(self, journal_path: Path | None = None):
        self._journal = Journal(journal_path)
        self._lock = threading.Lock()
        self._disk_full = False
        self._files: dict[str, FileState] = {
            row[0]: FileState(row[1], row[2], row[3])
            for row in self._journal.db.execute("SELECT path, mtime_ns, size, sha FROM vault_files")}

    def __len__(self) -> int:
        return len(self._files)

    def get(self, rel: str) -> FileState | None:
        with self._lock:
            return self._files.get(rel)

    def paths(self) -> list[str]:
        with self._lock:
            return list(self._files)

    def put(self, rel: str, state: FileState) -> None:
        with self._lock:
            if self._files.get(rel) == state:
                return
            self._files[rel] = state
            self._write("INSERT OR REPLACE INTO vault_files VALUES (?,?,?,?)",
                        [(rel, state.mtime_ns, state.size, state.sha)])

    def put_many(self, states: dict[str, FileState]) -> None:
        with self._lock:
            self._files.update(states)
            self._write("INSERT OR REPLACE INTO vault_files VALUES (?,?,?,?)",
                        [(rel, s.mtime_ns, s.size, s.sha) for rel, s in states.items()])

    def drop(self, rel: str) -> None:
        with self._lock:
            if self._files.pop(rel, None) is not None:
                self._write("DELETE FROM vault_files WHERE path=?", [(rel,)])

    def _write(self, sql: str, rows: list[tuple[object, ...]]) -> None:
        """One transaction; on a full state disk skipped (memory stays right), logged once."""
        db = self._journal.db
        try:
            db.execute("BEGIN")
            db.executemany(sql, rows)
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if not is_disk_full(exc):
                raise
            if not self._disk_full:
                log.warning("the vault watcher's records are kept in memory only: %s", exc)
            self._disk_full = True
            return
        if self._disk_full:
            log.info("the vault watcher's records are written again")
        self._disk_full = False

    def close(self) -> None:
        self._journal.close()
