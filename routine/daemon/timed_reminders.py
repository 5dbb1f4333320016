"""The daemon's one-shot reminders (``schedule/timed_reminders.py``): each one waiting is a one-shot
job on the daemon's timers (``Timers.at``, on the daemon's clock), so nothing polls; at its time it is
claimed in the journal (once, whatever fires it) and sent as a `reminders` message. At start every
reminder still waiting is planned again, and one whose time passed while the daemon was down fires
at once, said as late. The vault watcher's changes add and cancel the reminders of task lines (a
line ticked or deleted cancels its own) and read "remind me …" in a chat note's new message;
`routine remind` (another process) asks over the control socket (``plan``), an agent's
`remind_person` in this process through the store's listeners. Not the due-date nudges of tasks
(``flows/nudges.py``)."""

from __future__ import annotations

import logging
import sqlite3
import threading
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Protocol
from zoneinfo import ZoneInfo

from routine.config.notify import Topic
from routine.errors import RoutineError
from routine.flows.reactions import ReminderAsk, Reminders
from routine.flows.reminder_answers import choices  # also registers the phone's Snooze and Done
from routine.journal.chats import ChatStore
from routine.journal.timed_reminders import Reminder, ReminderStatus, listen, unlisten
from routine.person.notifications import Message, notify
from routine.schedule.timed_reminders import from_chat, from_note, reminder_log
from routine.vault.chat_notes import parse_chat
from routine.vault.provenance import is_persons_chat

if TYPE_CHECKING:
    from routine.daemon.live import Live
    from routine.daemon.subscriptions import Reactions
    from routine.daemon.timers import Timers

log = logging.getLogger("routine.daemon")

JOB = "reminder:"  # a reminder's timer job: reminder:<id>
LATE_AFTER = timedelta(minutes=1)  # fired later than this after its time: the message says it is late


class Host(Protocol):
    @property
    def live(self) -> Live: ...
    @property
    def timers(self) -> Timers | None: ...
    def now_local(self) -> datetime: ...
    def changed(self) -> None: ...


class TimedReminders:
    def __init__(self, host: Host):
        self.host = host
        self.lock = threading.Lock()  # one plan at a time
        self.notes: set[str] = set()  # notes whose task lines hold a reminder still waiting

    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.host.live.config.zone_name())

    def start(self) -> None:
        listen(self.plan)
        self.plan()

    def stop(self) -> None:
        unlisten(self.plan)

    def plan(self) -> None:
        """Every reminder waiting has its timer job, and no other job is left (snoozed, done,
        cancelled); one whose time has passed fires now."""
        timers = self.host.timers
        if timers is None:
            return
        try:
            with self.lock, reminder_log() as book:
                pending = book.pending()
                self.notes = book.notes()
        except (OSError, sqlite3.Error) as exc:
            log.error("reminders not planned: the journal could not be read: %s", exc)
            return
        wanted = {f"{JOB}{r.id}": r for r in pending}
        for job_id in timers.one_shots(JOB) - set(wanted):
            timers.cancel(job_id)
        for job_id, reminder in wanted.items():
            timers.at(job_id, reminder.at, partial(self.fire, reminder.id))
        self.host.changed()  # status and the dashboard list them

    def fire(self, reminder_id: int) -> None:
        """A timer reached a reminder's time: claim it (once) and tell the person."""
        now = self.host.now_local()
        try:
            with reminder_log() as book:
                reminder = book.get(reminder_id)
                if reminder is None or reminder.status is not ReminderStatus.PENDING:
                    return
                if reminder.at > now + timedelta(seconds=1):  # snoozed since its job was planned
                    self.plan()
                    return
                if not book.claim(reminder, now):
                    return
        except (OSError, sqlite3.Error) as exc:
            log.error("reminder %d not fired: the journal could not be written: %s", reminder_id, exc)
            return
        late = now - reminder.at > LATE_AFTER
        log.info("reminder %d fired%s: %s", reminder.id, " late" if late else "", reminder.text)
        notify(self.host.live.config, self.message(reminder, late), now)
        self.host.changed()

    def message(self, reminder: Reminder, late: bool) -> Message:
        at = reminder.at.astimezone(self.zone())
        when = f"It was due at {at:%H:%M} on {at:%a %d %b}; routine was not running then." if late \
            else f"Set for {at:%H:%M}."
        buttons = "the buttons, or " if self.host.live.config.notify.answers else ""
        body = (f"{when} Snooze or done: {buttons}`routine remind --snooze {reminder.id} 15m|1h|tomorrow`, "
                f"`routine remind --done {reminder.id}`.")
        title = f"Reminder{' (late)' if late else ''}: {reminder.text}"
        return Message(Topic.REMINDERS, reminder.key, title, body, note=reminder.note, asked=choices(reminder.id))

    # --- what the vault watcher sees ------------------------------------------------------------

    def subscribe(self, reactions: Reactions) -> None:
        """A note's task lines add or cancel reminders; a chat note's new message may ask for one
        (``flows/reactions.py`` decides which notes to read: ``Reminders``, ``ReminderAsk``)."""
        reactions.subscribe(lambda lines: self._sync_note(lines.rel, lines.text), Reminders)
        reactions.subscribe(lambda ask: self._read_chat(ask.rel, ask.text), ReminderAsk)

    def _sync_note(self, rel: str, text: str | None) -> None:
        if text is None and rel not in self.notes:
            return
        try:
            with reminder_log() as book:
                synced = from_note(book, rel, text, self.host.now_local(), self.zone())
        except (OSError, sqlite3.Error, RoutineError) as exc:
            log.error("the reminders of %s not read: %s", rel, exc)
            return
        for reminder in synced.added:
            log.info("reminder %d set in %s for %s: %s", reminder.id, rel, reminder.at.isoformat(), reminder.text)
        for reminder in synced.cancelled:
            log.info("reminder %d cancelled: its line in %s was ticked or deleted", reminder.id, rel)

    def _read_chat(self, rel: str, text: str) -> None:
        note = parse_chat(rel, text)
        pending = note.pending()
        if note.agent is None or pending is None:
            return
        try:
            with reminder_log() as book:
                if not is_persons_chat(note.properties, ChatStore(book.db).made_by_command(rel)):
                    log.info("no reminder read from %s: an agent wrote that chat note, not you", rel)
                    return  # the one provenance: agent-written text never asks for a reminder
                added = from_chat(book, rel, pending.text, self.host.now_local(), self.zone())
        except (OSError, sqlite3.Error, RoutineError) as exc:
            log.error("the reminders asked for in %s not read: %s", rel, exc)
            return
        for reminder in added:
            log.info("reminder %d asked for in %s, for %s: %s", reminder.id, rel, reminder.at.isoformat(),
                     reminder.text)
