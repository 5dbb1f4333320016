"""One-shot reminders the person set (table ``reminders``, migration ``026_reminders``): the text,
when it fires next, where it was set (``source``: one reminder per task line, chat turn, command),
and how it ended. Not the due-date nudges of tasks (``projects/reminders.py``), which need no table.

A fire is claimed by its ``round`` (``claim``), so a timer firing twice, or a restart, fires it once;
a snooze makes it pending again at a later time, to fire once more. Whoever changes the table in
the daemon's process tells it through ``listen`` (an agent's `remind_person`); another process
(`routine remind`) asks the daemon over its socket."""

from __future__ import annotations

import logging
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum
from typing import Callable

from routine.journal.stamps import utc_seconds

log = logging.getLogger(__name__)

MAX_TEXT = 500  # characters of what to remind of; the rest is cut with "…"


class ReminderStatus(str, Enum):
    PENDING = "pending"      # waits for its time
    FIRED = "fired"          # the person was told (a snooze makes it pending again)
    DONE = "done"            # the person said done
    CANCELLED = "cancelled"  # its task was ticked or its line deleted, or the person cancelled it
    PASSED = "passed"        # first seen long after its time (an old line in a note): never sent

    def __str__(self) -> str:
        return self.value


class Origin(str, Enum):
    """Where a reminder was set."""

    NOTE = "note"    # a task line's `(@2026-11-28 15:00)`
    CHAT = "chat"    # "remind me at 15:00 to …" in a chat note
    CLI = "cli"      # `routine remind TEXT --at WHEN`
    AGENT = "agent"  # an agent's `remind_person` tool

    def __str__(self) -> str:
        return self.value


OPEN = (ReminderStatus.PENDING.value, ReminderStatus.FIRED.value)  # what snooze and done act on


@dataclass(frozen=True)
class Reminder:
    id: int
    text: str
    at: datetime  # UTC: when it fires next (or fired last)
    origin: Origin
    source: str
    note: str | None
    status: ReminderStatus
    round: int  # fires so far
    created_at: datetime
    fired_at: datetime | None = None
    why: str | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Reminder:
        return cls(id=row["id"], text=row["text"], at=_time(row["at"]), origin=Origin(row["origin"]),
                   source=row["source"], note=row["note"], status=ReminderStatus(row["status"]),
                   round=row["round"], created_at=_time(row["created_at"]),
                   fired_at=_time(row["fired_at"]) if row["fired_at"] else None, why=row["why"])

    @property
    def key(self) -> str:
        """This fire's notification key: one message per reminder and round."""
        return f"reminder:{self.id}:{self.round}"


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(timezone.utc)


_COLUMNS = "id, text, at, origin, source, note, status, round, created_at, fired_at, why"


class ReminderLog:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def add(self, text: str, at: datetime, origin: Origin, source: str, note: str | None, now: datetime,
            status: ReminderStatus = ReminderStatus.PENDING) -> tuple[Reminder, bool]:
        """The reminder set at ``source`` (added now unless it was before), and whether it is new."""
        text = " ".join(text.split())
        text = text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 1] + "…"
        cur = self.db.execute(
            "INSERT OR IGNORE INTO reminders (text, at, origin, source, note, status, created_at)"
            " VALUES (?,?,?,?,?,?,?)",
            (text, utc_seconds(at), origin.value, source, note, status.value, utc_seconds(now)))
        found = self.by_source(source)
        assert found is not None  # inserted, or there before
        if cur.rowcount == 1:
            changed()
        return found, cur.rowcount == 1

    def by_source(self, source: str) -> Reminder | None:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM reminders WHERE source=?", (source,)).fetchone()
        return Reminder.from_row(row) if row else None

    def get(self, reminder_id: int) -> Reminder | None:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM reminders WHERE id=?", (reminder_id,)).fetchone()
        return Reminder.from_row(row) if row else None

    def pending(self) -> list[Reminder]:
        rows = self.db.execute(f"SELECT {_COLUMNS} FROM reminders WHERE status=? ORDER BY at, id",
                               (ReminderStatus.PENDING.value,))
        return [Reminder.from_row(r) for r in rows]

    def recent(self, limit: int) -> list[Reminder]:
        """Those waiting (soonest first), then the others (latest first), ``limit`` in all."""
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM reminders ORDER BY status != ?, CASE WHEN status = ? THEN at END,"
            " COALESCE(fired_at, at) DESC, id DESC LIMIT ?",
            (ReminderStatus.PENDING.value, ReminderStatus.PENDING.value, limit))
        return [Reminder.from_row(r) for r in rows]

    def of_note(self, note: str) -> list[Reminder]:
        rows = self.db.execute(f"SELECT {_COLUMNS} FROM reminders WHERE note=? AND origin=? AND status=?",
                               (note, Origin.NOTE.value, ReminderStatus.PENDING.value))
        return [Reminder.from_row(r) for r in rows]

    def notes(self) -> set[str]:
        """The notes whose task lines hold a reminder still waiting."""
        rows = self.db.execute("SELECT DISTINCT note FROM reminders WHERE origin=? AND status=?",
                               (Origin.NOTE.value, ReminderStatus.PENDING.value))
        return {r[0] for r in rows}

    def claim(self, reminder: Reminder, now: datetime) -> bool:
        """Mark this round of ``reminder`` fired; False when it was fired, snoozed, done or cancelled
        since it was read (so a fire happens once)."""
        cur = self.db.execute("UPDATE reminders SET status=?, round=round+1, fired_at=? WHERE id=? AND status=?"
                              " AND round=? AND at=?",
                              (ReminderStatus.FIRED.value, utc_seconds(now), reminder.id, ReminderStatus.PENDING.value,
                               reminder.round, utc_seconds(reminder.at)))
        return cur.rowcount == 1

    def snooze(self, reminder_id: int, until: datetime) -> bool:
        """Pending again at ``until`` (a fired one, or one still waiting, moved)."""
        cur = self.db.execute(f"UPDATE reminders SET status=?, at=?, why=NULL WHERE id=? AND status IN {OPEN}",
                              (ReminderStatus.PENDING.value, utc_seconds(until), reminder_id))
        if cur.rowcount == 1:
            changed()
        return cur.rowcount == 1

    def end(self, reminder_id: int, status: ReminderStatus, why: str) -> bool:
        """Done or cancelled: it never fires again. False when it had ended already."""
        cur = self.db.execute(f"UPDATE reminders SET status=?, why=? WHERE id=? AND status IN {OPEN}",
                              (status.value, why, reminder_id))
        if cur.rowcount == 1:
            changed()
        return cur.rowcount == 1


# --- who is told of a change in this process (the daemon's timers) ------------------------------------

_listeners: list[Callable[[], None]] = []
_lock = threading.Lock()


def listen(callback: Callable[[], None]) -> None:
    with _lock:
        _listeners.append(callback)


def unlisten(callback: Callable[[], None]) -> None:
    with _lock:
        if callback in _listeners:
            _listeners.remove(callback)


def changed() -> None:
    """A reminder was added, snoozed or ended in this process: its listeners plan again."""
    with _lock:
        listeners = list(_listeners)
    for callback in listeners:
        try:
            callback()
        except Exception:  # a listener's failure never fails whoever set the reminder
            log.exception("a reminders listener failed")
