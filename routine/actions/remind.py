"""`routine remind TEXT --at WHEN`, `routine remind --list`, `--snooze ID 15m|1h|tomorrow`, `--done ID`.

The reminder is written to the journal (``schedule.timed_reminders``), so it needs no daemon: a
running one plans its timer at once (the control socket's ``reminders``), one started later plans
it at start (and fires it late, once, if its time passed meanwhile). WHEN is read in routine's
time zone on the daemon's clock (``remind_words.when_from``).
"""

from __future__ import annotations

import argparse
from datetime import datetime
from zoneinfo import ZoneInfo

from routine.config.loader import load_config
from routine.daemon import client, clock
from routine.errors import ReminderProblem
from routine.journal.timed_reminders import Origin, Reminder
from routine.schedule import timed_reminders
from routine.schedule.remind_words import when_from
from routine.terminal.output import Clock, print_json, print_table


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    zone = ZoneInfo(config.zone_name())
    now = clock.now()
    if args.snooze:
        said = _snoozed(args.snooze, now, zone)
    elif args.done is not None:
        said = timed_reminders.done(args.done)
        _tell_daemon()
    elif args.text:
        said = _set(" ".join(args.text), args.at, now, zone)
    elif args.at:
        raise ReminderProblem("--at needs the words to remind you of.",
                              'write `routine remind "Call Priya" --at 15:00`.')
    else:
        return _list(args, zone)
    if args.json:
        print_json(_record(said, zone))
    else:
        print(f"{_verb(said)}: {timed_reminders.describe(said, zone)}")
    return 0


def _set(text: str, at: str | None, now: datetime, zone: ZoneInfo) -> Reminder:
    if not at:
        raise ReminderProblem("A reminder needs a time.", f'add --at, e.g. `routine remind "{text}" --at 15:00`.')
    moment = when_from(at, now, zone)
    with timed_reminders.reminder_log() as book:
        reminder = timed_reminders.set_reminder(book, text, moment, Origin.CLI, now)
    _tell_daemon()
    return reminder


def _snoozed(snooze: list[str], now: datetime, zone: ZoneInfo) -> Reminder:
    reminder_id, choice = snooze
    if not reminder_id.isdigit():
        raise ReminderProblem(f"--snooze {reminder_id!r} is no reminder's id.", "`routine remind --list` shows them.")
    said = timed_reminders.snooze(int(reminder_id), choice, now, zone)
    _tell_daemon()
    return said


def _tell_daemon() -> None:
    client.call({"op": "reminders"})  # a running daemon plans its timers now; None without one


def _verb(reminder: Reminder) -> str:
    return {"pending": "set", "done": "done"}.get(reminder.status.value, reminder.status.value)


def _record(reminder: Reminder, zone: ZoneInfo) -> dict[str, object]:
    return {"id": reminder.id, "text": reminder.text, "at": reminder.at.astimezone(zone).isoformat(),
            "status": reminder.status.value, "origin": reminder.origin.value, "note": reminder.note,
            "fired": reminder.round, "why": reminder.why}


def _list(args: argparse.Namespace, zone: ZoneInfo) -> int:
    with timed_reminders.reminder_log() as book:
        found = book.recent(timed_reminders.LIST_LIMIT)
    if args.json:
        print_json({"reminders": [_record(r, zone) for r in found]})
        return 0
    if not found:
        print('No reminders. Set one: `routine remind "Call Priya" --at 15:00`, or write `(@2026-11-28 15:00)` '
              "on a task line.")
        return 0
    clock = Clock(zone)
    print_table([{"id": r.id, "at": clock.show(r.at, "%a %Y-%m-%d %H:%M"), "status": r.status.value,
                  "text": r.text, "from": r.origin.value + (f" {r.note}" if r.note else "")} for r in found],
                ["id", "at", "status", "text", "from"], {"at": clock.label("at")})
    return 0
