"""The graph's cache in the state dir (``graph.sqlite3``): each note's facts with the mtime and
size they were read at, and the read/wrote edges taken from the run journal.

Like the search index it is only a cache: delete it and the next start reads the vault and the
journal again into the same graph. Kept current one note at a time (``update_paths``); a
reconcile re-reads only the notes whose mtime or size changed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from routine import paths
from routine.errors import NoteUnreadable
from routine.graph.extract import extract
from routine.graph.graph import KnowledgeGraph
from routine.graph.model import NoteFacts
from routine.journal import Journal
from routine.jsonvalue import JSONObject
from routine.statedb import open_sqlite
from routine.vault.files import decode_note, read_regular, vault_files
from routine.watch.filters import is_note

if TYPE_CHECKING:
    from routine.config.model import Config

FORMAT = "6"  # bump when extract changes what it reads: caches of another format are rebuilt
RUN_DAYS = 30  # "what it read and wrote lately": runs that ended within this many days


@dataclass
class SyncStats:
    notes: int = 0
    parsed: int = 0
    removed: int = 0
    seconds: float = 0.0

    def as_dict(self) -> JSONObject:
        return {"notes": self.notes, "parsed": self.parsed, "removed": self.removed, "seconds": round(self.seconds, 3)}


def _setup(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA busy_timeout=30000")
    db.execute("PRAGMA synchronous=NORMAL")  # a cache: a power cut costs at most a re-read
    db.executescript(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);"
        "CREATE TABLE IF NOT EXISTS notes (rel TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER, facts TEXT);"
        "CREATE TABLE IF NOT EXISTS runs (agent TEXT, rel TEXT, kind TEXT, at TEXT, PRIMARY KEY (agent, rel, kind));")


def cache_file() -> Path:
    return paths.state_dir() / "graph.sqlite3"


class GraphCache:
    """The graph of one vault and its cache file; ``parsed`` counts every note read, ever."""

    def __init__(self, vault: Path, path: Path | None = None):
        self.vault = Path(vault)
        self.path = path or cache_file()
        self.db = open_sqlite(self.path, _setup)  # a damaged cache is set aside and rebuilt
        self.graph = KnowledgeGraph()
        self.parsed = 0
        self._known: dict[str, tuple[int, int]] = {}
        self._load()

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def _batch(self) -> Iterator[None]:
        """One transaction for a pass: a thousand notes are one commit, not a thousand."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # --- start-up ----------------------------------------------------------------------------------

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: object) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(value)))

    def _load(self) -> None:
        if (self._meta("format"), self._meta("vault")) != (FORMAT, str(self.vault.resolve())):
            self.db.executescript("DELETE FROM notes; DELETE FROM runs; DELETE FROM meta;")
            self._set_meta("format", FORMAT)
            self._set_meta("vault", self.vault.resolve())
        facts = []
        for rel, mtime_ns, size, data in self.db.execute("SELECT rel, mtime_ns, size, facts FROM notes"):
            self._known[rel] = (mtime_ns, size)
            facts.append(NoteFacts.from_dict(json.loads(data)))
        self.graph.load(facts)
        self.graph.set_runs({(a, r, k): at for a, r, k, at in self.db.execute("SELECT agent, rel, kind, at FROM runs")})
        # This process's own place in the journal (a CLI run beside the daemon keeps its own).
        self._cursor = int(self._meta("journal_cursor") or 0)

    # --- following the vault -----------------------------------------------------------------------

    def reconcile(self) -> SyncStats:
        """Bring the graph level with the vault: only notes whose mtime or size changed are read."""
        started, stats = time.monotonic(), SyncStats()
        present = {rel for rel in vault_files(self.vault) if is_note(rel)}
        changed: list[NoteFacts] = []
        fresh: list[NoteFacts] = []
        gone = sorted(set(self._known) - present)
        with self._batch(), self.graph.lock:
            for rel in sorted(present):
                st = _stat(self.vault / rel)
                if st is None or self._known.get(rel) == st:
                    continue
                facts = self._read(rel, st)
                if facts is not None:
                    (fresh if rel not in self.graph.facts else changed).append(facts)
            stats.parsed = len(changed) + len(fresh)
            if fresh and len(fresh) > len(self.graph.facts):
                self.graph.load(fresh)  # a first build: link everything once, not note by note
            else:
                changed += fresh
            for facts in changed:
                self.graph.set_note(facts)
            for rel in gone:
                self._forget(rel)
        stats.notes, stats.removed = len(present), len(gone)
        stats.seconds = time.monotonic() - started
        return stats

    def update_paths(self, rels: Iterable[str]) -> SyncStats:
        """Notes the vault watcher says changed (created, modified, moved away or deleted)."""
        started, stats = time.monotonic(), SyncStats()
        with self._batch():
            self._update(rels, stats)
        stats.notes, stats.seconds = len(self.graph.facts), time.monotonic() - started
        return stats

    def _update(self, rels: Iterable[str], stats: SyncStats) -> None:
        for rel in sorted(set(rels)):
            if not is_note(rel):
                continue
            st = _stat(self.vault / rel)
            if st is None:
                if rel in self._known:
                    self._forget(rel)
                    stats.removed += 1
                continue
            if self._known.get(rel) == st and rel in self.graph.facts:
                continue  # the same bytes as last read (a touch, or our own write read already)
            facts = self._read(rel, st)
            if facts is not None:
                self.graph.set_note(facts)
                stats.parsed += 1

    def _read(self, rel: str, st: tuple[int, int]) -> NoteFacts | None:
        try:
            # never a pipe, a loop, a huge export, a binary file named .md
            text = decode_note(read_regular(self.vault / rel, label=rel), rel)
        except (OSError, NoteUnreadable):
            return None
        facts = extract(rel, text)
        self.parsed += 1
        self._known[rel] = st
        self.db.execute("INSERT OR REPLACE INTO notes VALUES (?, ?, ?, ?)",
                        (rel, st[0], st[1], json.dumps(facts.to_dict(), ensure_ascii=False)))
        return facts

    def _forget(self, rel: str) -> None:
        self._known.pop(rel, None)
        self.db.execute("DELETE FROM notes WHERE rel=?", (rel,))
        self.graph.remove_note(rel)

    # --- following the journal ---------------------------------------------------------------------

    def follow_journal(self, journal: Journal, now: datetime | None = None) -> list[str]:
        """Add the read and wrote edges of runs finished since last time; returns the notes those
        runs wrote (routine's own writes do not reach the vault watcher, so read them here)."""
        now = now or datetime.now(UTC)
        since = (now - timedelta(days=RUN_DAYS)).isoformat(timespec="milliseconds")
        rows, self._cursor = journal.step_io(self._cursor, since)
        wrote_paths = []
        for row in rows:
            at = row.get("ended_at") or ""
            for rel in [*(row.get("sources") or []), *_tool_reads(row.get("log"))]:
                self._run_edge(row["agent"], rel, "read", at)
            wrote = row.get("wrote")
            if isinstance(wrote, dict) and wrote.get("path"):
                rel = (
                    wrote["proposal"] if wrote.get("outcome") == "proposal" and wrote.get("proposal") else wrote["path"]
                )
                self._run_edge(row["agent"], rel, "wrote", at)
                wrote_paths.append(rel)
        self.db.execute("DELETE FROM runs WHERE at < ?", (since,))
        self._set_meta("journal_cursor", self._cursor)
        runs = {(a, r, k): at for a, r, k, at in self.db.execute("SELECT agent, rel, kind, at FROM runs")}
        if rows or runs != self.graph.runs:
            self.update_paths(wrote_paths)
            self.graph.set_runs(runs)
        return wrote_paths

    def _run_edge(self, agent: str, rel: str, kind: str, at: str) -> None:
        self.db.execute("INSERT INTO runs VALUES (?, ?, ?, ?) ON CONFLICT (agent, rel, kind) DO UPDATE SET"
                        " at = max(at, excluded.at)", (agent, rel, kind, at))


def _tool_reads(log: object) -> list[str]:
    """Notes a tool-using run read with read_note (its transcript says which, first line '# PATH')."""
    found = []
    for entry in log if isinstance(log, list) else []:
        result = entry.get("result") if isinstance(entry, dict) else None
        if entry.get("name") == "read_note" and not entry.get("refused") and isinstance(result, str) \
                and result.startswith("# "):
            found.append(result.split("\n", 1)[0][2:].strip())
    return found


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def open_current(config: Config) -> GraphCache:
    """The graph of ``config``'s vault, brought level with the vault and the journal now (what
    the CLI uses; the daemon keeps one open and follows the watcher instead)."""
    cache = GraphCache(config.vault)
    cache.reconcile()
    journal = Journal()
    try:
        cache.follow_journal(journal)
    finally:
        journal.close()
    return cache
