"""Nudges for tasks with a due date (``projects.reminders``): the daemon's health monitor asks each
round, by the daemon's clock; each nudge is a message of the `tasks` topic whose key the journal's
notifications table holds, so it is sent once (the day before, then once overdue), a restart or a
later round never repeats it, and quiet hours hold it as any message."""

from __future__ import annotations

import logging
from datetime import datetime

from routine.config.model import Config
from routine.config.notify import Priority, Topic
from routine.person.notifications import Message, notify
from routine.projects.reminders import Nudge, reminders

log = logging.getLogger("routine.daemon")  # its lines are the daemon's (the monitor asks)


def remind(config: Config, now_local: datetime) -> int:
    """Send today's nudges not sent before; how many were new."""
    settings = config.notify
    if settings.remind is None or not settings.wants(Topic.TASKS):
        return 0
    today = now_local.date()
    sent = 0
    for r in reminders(config.vault, today, settings.remind):
        body = f"In {r.task.file}, project {r.project}" + (f", for {r.task.assignee}" if r.task.assignee else "") + "."
        message = Message(Topic.TASKS, r.key, r.title(today), body, note=r.task.file,
                          priority=Priority.HIGH if r.nudge is Nudge.OVERDUE else Priority.NORMAL)
        sent += notify(config, message, now_local) is not None
    if sent:
        log.info("%d task reminder%s sent", sent, "s" * (sent != 1))
    return sent
