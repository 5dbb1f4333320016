"""A task line in a case file assigned to a person (`[assignee:: [[Ada]]]`, Ada not an agent):
the person is told once, on their phone (``routine.person.notifications``), when the daemon sees the
note that holds it change. Agents' tasks are picked up instead (``projects.pickup``)."""

from __future__ import annotations

import hashlib
from datetime import datetime

from routine.config.model import Config
from routine.config.notify import Topic
from routine.errors import RoutineError
from routine.person.notifications import Message, notify
from routine.projects.model import link_target, member_kind, project_folder_of
from routine.projects.tasks import parse_tasks
from routine.vault.files import read_text

TITLE_CHARS = 160


def tell_people(config: Config, rel: str, now: datetime) -> int:
    """Notify each open task of ``rel`` assigned to a person (once per task and person)."""
    if not config.notify.wants(Topic.TASKS):
        return 0
    try:
        tasks, _ = parse_tasks(rel, read_text(config.vault / rel))
    except (OSError, RoutineError):
        return 0
    told = 0
    for task in tasks:
        person = link_target(task.assignee) if task.assignee else ""
        if not task.open or not person or member_kind(config.vault, person) != "person":
            continue
        digest = hashlib.sha1(f"{person}|{task.text}".encode()).hexdigest()[:16]
        text = task.text if len(task.text) <= TITLE_CHARS else task.text[:TITLE_CHARS] + "…"
        project = project_folder_of(rel) or rel
        due = f" (due {task.due})" if task.due else ""
        told += notify(config, Message(Topic.TASKS, f"task:{rel}:{digest}", f"Task for {person}: {text}",
                                       f"In {rel}, project {project}{due}.", note=rel), now) is not None
    return told
