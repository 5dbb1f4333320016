"""A task line in a case file assigned to a person (`[assignee:: [[Ada]]]`, Ada not an agent):
the person is told once, on their phone (``routine.person.notifications``), when the daemon sees the
note that holds it change. Which tasks and what the message says is decided in
``flows/reactions.py`` (``TellPerson``); agents' tasks are picked up instead (``flows.pickup``)."""

from __future__ import annotations

from datetime import datetime

from routine.config.model import Config
from routine.config.notify import Topic
from routine.flows.reactions import TellPerson, persons_tasks
from routine.person.notifications import Message, notify


def tell(config: Config, reaction: TellPerson, now: datetime) -> bool:
    """Send one person's task (once: the journal keeps the message's key); True if it went out."""
    message = Message(Topic.TASKS, reaction.key, reaction.title, reaction.body, note=reaction.rel)
    return notify(config, message, now) is not None


def tell_people(config: Config, rel: str, now: datetime) -> int:
    """Notify each open task of ``rel`` assigned to a person (once per task and person)."""
    return sum(tell(config, reaction, now) for reaction in persons_tasks(config, rel))
