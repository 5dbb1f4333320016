"""routine's own SQLite files in the state dir (the run journal, the graph cache), opened so
that a damaged file never stops routine.

These files are history and caches: the vault is the truth. A file that is not a database
(garbage, another program's file) or is malformed (truncated by a full disk, a bad SD card) is
moved aside, with its ``-wal`` and ``-shm``, as ``<name>.damaged-<YYYYmmdd-HHMMSS>.sqlite3`` —
kept for the person, never deleted — and a new empty one is started in its place. The set-aside
files are how ``routine doctor`` and the daemon's alert know it happened (``set_aside_files``).

The first open of a file in a process runs ``PRAGMA quick_check`` (about 0.1 s for 200 MB);
later opens of the same file trust it.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from routine.causes import is_disk_full
from routine.errors import StateDiskFull

log = logging.getLogger(__name__)

DAMAGED = ".damaged-"
_DAMAGE_CODES = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB
_checked: set[tuple[str, int]] = set()  # (path, inode) found sound by this process
_lock = threading.Lock()
NO_ROOM = 1 << 20  # bytes free under which an I/O error opening a file is taken for a full disk
SQLITE_BUSY = 5  # and its extended codes (517: SQLITE_BUSY_SNAPSHOT)
SNAPSHOT_PATIENCE = 30.0  # seconds a write waits for another thread's read on the same connection (as busy_timeout)
_Parameters = Any  # whatever sqlite3 takes as a statement's parameters (typeshed's private alias)


class Connection(sqlite3.Connection):
    """A connection several threads share (the daemon's journal), whose writes wait for each other's reads.

    In WAL mode a read left open on a connection (a cursor another thread is still stepping
    through) holds the connection to its snapshot, and a write on it fails at once with "database
    is locked" — busy_timeout does not wait — when another connection committed since
    (``SQLITE_BUSY_SNAPSHOT``) or is writing now (``SQLITE_BUSY``: waiting could deadlock). Outside
    an explicit transaction that read ends in milliseconds, so the write is tried again until it
    does (``SNAPSHOT_PATIENCE`` from the first try, busy_timeout's wait included); inside one,
    retrying cannot help, and the error is raised as SQLite gave it."""

    busy_retries = 0  # writes that had to wait for another thread's read (how often it happens)

    def execute(self, sql: str, parameters: _Parameters = (), /) -> sqlite3.Cursor:
        return self._patiently(lambda: super(Connection, self).execute(sql, parameters))

    def executemany(self, sql: str, parameters: Iterable[_Parameters], /) -> sqlite3.Cursor:
        rows = list(parameters)
        return self._patiently(lambda: super(Connection, self).executemany(sql, rows))

    def _patiently(self, statement: Callable[[], sqlite3.Cursor]) -> sqlite3.Cursor:
        deadline, pause = time.monotonic() + SNAPSHOT_PATIENCE, 0.001
        while True:
            try:
                return statement()
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or self.in_transaction or time.monotonic() > deadline:
                    raise
            self.busy_retries += 1
            time.sleep(pause)
            pause = min(pause * 2, 0.05)


@dataclass(frozen=True)
class SetAside:
    """A damaged state file moved aside: what it was (``name``), where it is now, and when."""

    name: str
    path: Path
    at: datetime

    @property
    def sentence(self) -> str:
        return (f"{self.name} in {self.path.parent} was damaged; it was moved aside as {self.path.name} "
                f"on {self.at:%Y-%m-%d %H:%M} and a new one was started (delete the old one once you no "
                "longer need the history it holds).")


def is_busy(exc: BaseException) -> bool:
    """Whether an SQLite error says another connection holds the database ("database is locked")."""
    return isinstance(exc, sqlite3.OperationalError) and (getattr(exc, "sqlite_errorcode", 0) & 0xFF) == SQLITE_BUSY


def is_damage(exc: BaseException) -> bool:
    """Whether an SQLite error says the file itself is damaged (not locked, not full, not read-only)."""
    return isinstance(exc, sqlite3.DatabaseError) and getattr(exc, "sqlite_errorcode", None) in _DAMAGE_CODES


def open_sqlite(path: Path, setup: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
    """A connection to ``path`` with ``setup`` applied (pragmas, schema, migrations); a damaged
    file is set aside and a new one started."""
    try:
        return _open(path, setup)
    except (OSError, sqlite3.OperationalError) as exc:
        if is_disk_full(exc) or _no_room(path.parent):  # a full disk says "disk I/O error" making the -shm
            raise StateDiskFull(path, str(exc)) from None
        raise


def _open(path: Path, setup: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    with _lock:  # two threads finding the same damage move it aside once
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False, factory=Connection)
        problem = _setup_checked(db, setup, check=_key(path) not in _checked)
        if problem is not None:
            # Moved while still open: SQLite removes a -wal by its name when the last connection closes.
            set_aside(path, problem)
            db.close()
            db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False, factory=Connection)
            _setup_checked(db, setup, check=False)
        _checked.add(_key(path))
        return db


def _no_room(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < NO_ROOM
    except OSError:
        return False


def _key(path: Path) -> tuple[str, int]:
    try:
        return str(path.resolve()), path.stat().st_ino
    except OSError:
        return str(path), -1


def _setup_checked(db: sqlite3.Connection, setup: Callable[[sqlite3.Connection], None], check: bool) -> str | None:
    """``setup`` applied; what shows the file damaged (``PRAGMA quick_check`` first when
    ``check``), or None. Any other error closes the connection and is raised."""
    try:
        if check:
            verdict = str(db.execute("PRAGMA quick_check").fetchone()[0])
            if verdict != "ok":
                return f"quick_check: {verdict[:200]}"
        setup(db)
        return None
    except sqlite3.DatabaseError as exc:
        if is_damage(exc):
            return str(exc)
        db.close()
        raise
    except BaseException:
        db.close()
        raise


def set_aside(path: Path, why: str, now: datetime | None = None) -> SetAside:
    """Move a damaged ``path`` (and its -wal, -shm) aside; the log says so in one sentence."""
    now = now or datetime.now().astimezone()
    stamp = f"{now:%Y%m%d-%H%M%S}"
    target = path.with_name(f"{path.stem}{DAMAGED}{stamp}{path.suffix}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.stem}{DAMAGED}{stamp}-{n}{path.suffix}")
    for suffix in ("-wal", "-shm", ""):
        try:
            os.replace(f"{path}{suffix}", f"{target}{suffix}")
        except FileNotFoundError:
            pass
    moved = SetAside(path.name, target, now)
    log.warning("%s (%s)", moved.sentence, why)
    return moved


def set_aside_files(folder: Path) -> list[SetAside]:
    """The damaged files kept aside in ``folder``, oldest first."""
    found = []
    for path in sorted(p for p in folder.glob(f"*{DAMAGED}*") if p.suffix in (".sqlite3", ".json")):
        stem, _, stamp = path.stem.partition(DAMAGED)
        try:
            at = datetime.strptime(stamp[:15], "%Y%m%d-%H%M%S").astimezone()
        except ValueError:
            continue
        found.append(SetAside(f"{stem}{path.suffix}", path, at))
    return found
