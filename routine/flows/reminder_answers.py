"""A reminder's buttons on the phone (issue 45): Snooze 15 min / 1 h / Tomorrow and Done, offered on
each reminder's message (``choices``; ntfy shows the first three, its limit: the snoozes — a
reminder not snoozed never fires again anyway; Telegram shows all four) and carried out, once an answer is taken
(``flows.answers``), by the reminders' own ``snooze`` and ``done`` (``schedule.timed_reminders``),
as `routine remind --snooze/--done` does. Registered with ``flows.answers.register`` on import
(the daemon's reminders part imports it)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from routine.errors import ReminderProblem
from routine.flows.answers import Answer, Context, Handled, register
from routine.journal.answers import Refusal
from routine.person.tickets import AnswerKind, Asked, Choice
from routine.schedule import timed_reminders

SNOOZES = (("15 min", "15m"), ("1 h", "1h"), ("Tomorrow", "tomorrow"))  # the button, `snooze_until`'s choice


def choices(reminder_id: int) -> Asked:
    """What a reminder's message asks: snooze it (three lengths) or done."""
    return Asked(str(reminder_id), (*(Choice(AnswerKind.SNOOZE, label, value) for label, value in SNOOZES),
                                    Choice(AnswerKind.DONE, "Done")))


def _snooze(ctx: Context, answer: Answer) -> Handled:
    zone = ZoneInfo(ctx.config.zone_name())
    try:
        reminder = timed_reminders.snooze(int(answer.subject), answer.value, ctx.now, zone)
    except (ReminderProblem, ValueError) as exc:
        return Handled(f"{exc}; nothing was changed.", Refusal.DECIDED)
    return Handled(f"Snoozed: {reminder.text}, again at {reminder.at.astimezone(zone):%a %H:%M}.")


def _done(ctx: Context, answer: Answer) -> Handled:
    try:
        reminder = timed_reminders.done(int(answer.subject), why=f"done ({answer.by})")
    except (ReminderProblem, ValueError) as exc:
        return Handled(f"{exc}; nothing was changed.", Refusal.DECIDED)
    return Handled(f"Done: {reminder.text}.")


register(AnswerKind.SNOOZE, _snooze)
register(AnswerKind.DONE, _done)
