"""Which tasks with a due date (`📅 2026-12-01`, a person's or an agent's) want a nudge today:
once when the due day comes near (`notify: {remind: 1d}`: the day before), once when it has passed.
Pure reading; the daemon sends them (``flows.nudges``, each monitor round), each once, and the digest marks them.

Tasks are read with the project task reader (``projects.tasks.project_tasks``): the person's
checkbox lines of a project's case files (routine's own copies are no tasks: ``vault.provenance``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from enum import Enum
from pathlib import Path

from routine.projects.model import Status, list_projects
from routine.projects.tasks import Task, project_tasks


class Nudge(str, Enum):
    SOON = "soon"  # the due day is near (within `remind`)
    OVERDUE = "overdue"  # the due day has passed

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Reminder:
    task: Task
    project: str
    due: date
    nudge: Nudge

    @property
    def key(self) -> str:
        """One message per task, due date and kind of nudge: a moved due date nudges again."""
        return f"remind:{self.nudge}:{self.due.isoformat()}:{self.task.key}"

    def title(self, today: date) -> str:
        who = f" ({self.task.assignee})" if self.task.assignee else ""
        return f"{due_words(self.due, today).capitalize()}: {self.task.text}{who}"


def nudge_of(due: date, today: date, before: timedelta) -> Nudge | None:
    """What a task due on ``due`` wants today: overdue once the day has passed, soon from
    ``before`` ahead of the day (whole days: `1d` is the day before), else nothing."""
    if today > due:
        return Nudge.OVERDUE
    return Nudge.SOON if today >= due - timedelta(days=max(before.days, 0)) else None


def due_words(due: date, today: date) -> str:
    """`due today`, `due tomorrow`, `due Mon 2026-12-07`, `overdue since 2026-12-01`."""
    if due < today:
        return f"overdue since {due.isoformat()}"
    if due == today:
        return "due today"
    return "due tomorrow" if due == today + timedelta(days=1) else f"due {due:%a %Y-%m-%d}"


def due_date(task: Task) -> date | None:
    try:
        return date.fromisoformat(task.due) if task.due else None
    except ValueError:
        return None


def reminders(vault: Path, today: date, before: timedelta) -> list[Reminder]:
    """The open tasks of every active project that want a nudge today."""
    out = []
    for project in list_projects(vault):
        if project.status is not Status.ACTIVE:
            continue
        for task in project_tasks(vault, project.folder)[0]:
            due = due_date(task)
            nudge = nudge_of(due, today, before) if due and task.open else None
            if nudge is not None and due is not None:
                out.append(Reminder(task, project.name, due, nudge))
    return out
