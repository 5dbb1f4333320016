"""One-shot reminders, set in the person's words, kept in the journal (``journal/timed_reminders.py``)
and fired by the daemon's timers (``daemon/timed_reminders.py``). The four ways in: a task line's
stamp in a note the person wrote (``from_note``: only the person's text, ``projects.tasks``), "remind
me at 15:00 to …" in a chat note (``from_chat``), `routine remind` and an agent's `remind_person`
(``set_reminder``). ``snooze`` and ``done`` are what a phone's buttons (and `routine remind
--snooze/--done`) call. Not the due-date nudges of tasks (``flows/nudges.py``)."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from routine import paths
from routine.errors import ReminderProblem, RoutineError
from routine.journal.db import connect
from routine.journal.timed_reminders import Origin, Reminder, ReminderLog, ReminderStatus
from routine.projects.tasks import parse_tasks
from routine.schedule.remind_words import asked_in, snooze_until, stamp_of

PASSED_AFTER = timedelta(hours=12)  # a task line's reminder first seen this late is recorded, never sent
LIST_LIMIT = 20


@contextmanager
def reminder_log(journal: Path | None = None) -> Iterator[ReminderLog]:
    """The journal's reminders, opened for one use."""
    db = connect(journal or paths.journal_file())
    try:
        yield ReminderLog(db)
    finally:
        db.close()


def _digest(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:16]


def set_reminder(book: ReminderLog, text: str, at: datetime, origin: Origin, now: datetime,
                 source: str | None = None, note: str | None = None) -> Reminder:
    """A reminder of ``text`` at ``at`` (`routine remind`, an agent's tool): a new one each time,
    unless ``source`` names where it was set before."""
    if not text.strip():
        raise ReminderProblem("A reminder needs words: what should routine remind you of?",
                              "write it, e.g. `routine remind \"Call Priya\" --at 15:00`.")
    reminder, _ = book.add(text, at, origin, source or f"{origin.value}:{now.isoformat()}:{_digest(text)}", note, now)
    return reminder


@dataclass
class NoteSync:
    """What a note's task lines changed: reminders added, and those cancelled (ticked, deleted)."""

    added: list[Reminder] = field(default_factory=list)
    cancelled: list[Reminder] = field(default_factory=list)


def from_note(book: ReminderLog, rel: str, text: str | None, now: datetime, zone: ZoneInfo) -> NoteSync:
    """Match the reminders of note ``rel`` to its open task lines now (``text`` None: the note is
    gone): a new stamped line adds one, a line ticked, cancelled, deleted or re-timed cancels its own."""
    tasks = parse_tasks(rel, text)[0] if text is not None else []
    sync, wanted = NoteSync(), set()
    for task in tasks:
        stamp = stamp_of(task.text)
        if stamp is None or not task.open:
            continue
        source = f"note:{rel}#{_digest(stamp.text, stamp.written)}"
        wanted.add(source)
        at = stamp.instant(zone)
        status = ReminderStatus.PASSED if at < now - PASSED_AFTER else ReminderStatus.PENDING
        reminder, new = book.add(stamp.text, at, Origin.NOTE, source, rel, now, status)
        if new:
            sync.added.append(reminder)
    for reminder in book.of_note(rel):
        if reminder.source not in wanted:
            why = "its note is gone" if text is None else "its task was ticked, or its line changed or deleted"
            if book.end(reminder.id, ReminderStatus.CANCELLED, why):
                sync.cancelled.append(reminder)
    return sync


def from_chat(book: ReminderLog, rel: str, message: str, now: datetime, zone: ZoneInfo) -> list[Reminder]:
    """The reminders a person's chat message asks for ("remind me at 15:00 to call Priya") that
    were not set before: the same message seen again that day adds none (said again another day,
    it does)."""
    return [reminder for reminder, new in asked_in_chat(book, rel, message, now, zone) if new]


def asked_in_chat(book: ReminderLog, rel: str, message: str, now: datetime,
                  zone: ZoneInfo) -> list[tuple[Reminder, bool]]:
    """Each reminder the message asks for, set once per message and day whoever reads it first
    (the vault watcher, or the chat note's answer, which says it): (the reminder, whether new)."""
    found = []
    for asked in asked_in(message, now, zone):
        source = f"chat:{rel}#{_digest(message, asked.said, now.astimezone(zone).date().isoformat())}"
        found.append(book.add(asked.text, asked.at, Origin.CHAT, source, rel, now))
    return found


def acknowledged(reminder: Reminder, zone: ZoneInfo) -> str:
    """What a chat's answer says of a reminder its message set."""
    return (f"Reminder set for {reminder.at.astimezone(zone):%a %d %b %H:%M}: {reminder.text} "
            f"(`routine remind --list`; cancel it with `routine remind --done {reminder.id}`).")


def _open(book: ReminderLog, reminder_id: int) -> Reminder:
    reminder = book.get(reminder_id)
    if reminder is None:
        raise ReminderProblem(f"There is no reminder {reminder_id}.", "`routine remind --list` shows them.")
    if reminder.status not in (ReminderStatus.PENDING, ReminderStatus.FIRED):
        raise ReminderProblem(f"Reminder {reminder_id} ({reminder.text}) has ended: {reminder.status}.",
                              "set a new one with `routine remind TEXT --at WHEN`.")
    return reminder


def snooze(reminder_id: int, choice: str, now: datetime, zone: ZoneInfo, journal: Path | None = None) -> Reminder:
    """Fire ``reminder_id`` once more: in 15 minutes (``15m``), an hour (``1h``), or ``tomorrow``
    at 09:00 (``remind_words.DAY_TIME``). The phone's button and `routine remind --snooze`. A
    reminder that has not fired yet is pushed later, counted from its own time: never earlier."""
    with reminder_log(journal) as book:
        reminder = _open(book, reminder_id)
        book.snooze(reminder_id, snooze_until(choice, max(now, reminder.at), zone))
        found = book.get(reminder_id)
    assert found is not None
    return found


def done(reminder_id: int, journal: Path | None = None, why: str = "done") -> Reminder:
    """The person is done with it: it never fires again (the phone's button, `routine remind --done`)."""
    with reminder_log(journal) as book:
        _open(book, reminder_id)
        book.end(reminder_id, ReminderStatus.DONE, why)
        found = book.get(reminder_id)
    assert found is not None
    return found


def describe(reminder: Reminder, zone: ZoneInfo) -> str:
    """One line for `routine status`, the dashboard and `routine remind --list`."""
    where = f", in [[{reminder.note.removesuffix('.md')}]]" if reminder.note else ""
    return f"#{reminder.id} {reminder.at.astimezone(zone):%a %d %b %H:%M}: {reminder.text} ({reminder.origin}{where})"


def waiting(zone: ZoneInfo, journal: Path | None = None, limit: int = 5) -> tuple[str, ...]:
    """The reminders still to fire, soonest first, one line each (status, the dashboard)."""
    try:
        with reminder_log(journal) as book:
            return tuple(describe(r, zone) for r in book.pending()[:limit])
    except (OSError, sqlite3.Error, RoutineError):
        return ()
