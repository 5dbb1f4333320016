"""`remind_person`: an agent sets a one-shot reminder for the person (``schedule.timed_reminders``),
fired by the daemon at that local time as a `reminders` message, like one the person set."""

from __future__ import annotations

import hashlib
import sqlite3
from zoneinfo import ZoneInfo

from routine.errors import RoutineError
from routine.journal.timed_reminders import Origin
from routine.schedule import timed_reminders
from routine.schedule.remind_words import FORMS, when_from
from routine.tools.base import ToolContext, ToolError, tool


@tool("remind_person", "Remind the person of something at a time of theirs: a message reaches their phone then, "
      "once. Use it when they ask to be reminded, or a task of theirs has a time.",
      {"text": {"type": "string", "description": "what to remind them of, in a few words (e.g. 'Call Priya')"},
       "at": {"type": "string", "description": "when, in their local time: 15:00, tomorrow 9:00, monday at 15:00, "
                                               "2026-11-28 15:00, in 2 hours"}},
      required=["text", "at"])
def remind_person(ctx: ToolContext, text: str, at: str) -> str:
    zone = ZoneInfo(ctx.config.zone_name())
    try:
        moment = when_from(at, ctx.now, zone)
    except RoutineError as exc:
        raise ToolError(f"{exc.message} Write {FORMS}.") from None
    digest = hashlib.sha1(f"{text}\x1f{moment.isoformat()}".encode()).hexdigest()[:16]
    source = f"agent:{ctx.agent.name}:{ctx.run_id or ctx.now.isoformat()}:{digest}"  # a call repeated in a run: one
    try:
        with timed_reminders.reminder_log() as book:
            reminder = timed_reminders.set_reminder(book, text, moment, Origin.AGENT, ctx.now, source=source)
    except RoutineError as exc:
        raise ToolError(exc.message) from None
    except (OSError, sqlite3.Error) as exc:
        raise ToolError(f"The reminder could not be recorded: {exc}.") from None
    return f"Reminder #{reminder.id} set: {timed_reminders.describe(reminder, zone)}."
