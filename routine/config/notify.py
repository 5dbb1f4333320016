"""`notify:` in routine.yaml as the code uses it: where messages go (Apprise URLs), about what,
and when not (quiet hours). ``Topic`` is the one list of what can notify (the schema's enum and
description, `notify.on`'s default ``all``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import time, timedelta
from enum import Enum

from routine.durations import parse_duration


class Priority(str, Enum):
    """How urgent a message is, in Apprise's words (each service's own scale is mapped from them)."""

    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"

    def __str__(self) -> str:
        return self.value


class Topic(str, Enum):
    """What a message is about: one member and its line in ``_TRAITS``, and `notify.on` (its
    default ``all``, its description in the schema) offers it."""

    ALERTS = "alerts"
    PROPOSALS = "proposals"
    TASKS = "tasks"
    READY = "ready"
    REMINDERS = "reminders"

    def __str__(self) -> str:
        return self.value

    @property
    def priority(self) -> Priority:
        """A message's priority unless it says otherwise: an outage or failure high, something
        waiting for the person normal, a note ready to read low."""
        return _TRAITS[self][0]

    @property
    def meaning(self) -> str:
        """What is sent about it, for the person (the schema's description of `notify.on`)."""
        return _TRAITS[self][1]


# topic: (its messages' priority, what is sent)
_TRAITS: dict[Topic, tuple[Priority, str]] = {
    Topic.ALERTS: (Priority.HIGH, "an alert opened, one message per cause, and when it resolves"),
    Topic.PROPOSALS: (Priority.NORMAL, "a proposal waiting for your approval"),
    Topic.TASKS: (Priority.NORMAL, "a project task assigned to a person, and a nudge when it is due"),
    Topic.READY: (Priority.LOW, "the note of a block named in `ready`, with its first lines"),
    Topic.REMINDERS: (Priority.HIGH, "a reminder you set, at its time (`routine remind`, `(@2026-11-28 15:00)` on a "
                                     "task, \"remind me at 15:00 to …\" in a chat note)"),
}
ALL = "all"  # `notify.on: all` (the default): every topic, those added later too


def topics(on: str | list[str]) -> frozenset[Topic]:
    """`notify.on` as written (the schema checked it): ``all``, or a list of topics."""
    return frozenset(Topic) if on == ALL else frozenset(Topic(t) for t in on)


@dataclass(frozen=True)
class NotifySettings:
    urls: tuple[str, ...] = ()
    on: frozenset[Topic] = frozenset()
    ready: tuple[str, ...] = ()  # blocks whose finished note is sent
    quiet: tuple[time, time] | None = None  # (from, to) local time; may wrap past midnight
    remind: timedelta | None = timedelta(days=1)  # a due task is nudged this long before its day; None: never

    def wants(self, topic: Topic) -> bool:
        return bool(self.urls) and topic in self.on

    def is_quiet(self, local: time) -> bool:
        return self.quiet is not None and in_window(self.quiet, local)


def in_window(window: tuple[time, time], local: time) -> bool:
    """``local`` falls in the daily ``window`` (from, to), which may wrap past midnight."""
    start, end = window
    return start <= local < end if start <= end else (local >= start or local < end)


def quiet_hours(text: str) -> tuple[time, time] | None:
    """"22:00-07:00" → (22:00, 07:00); "" → None. The schema checked the form."""
    if not text:
        return None
    first, _, last = text.partition("-")
    return time.fromisoformat(first.strip()), time.fromisoformat(last.strip())


def remind_ahead(text: str) -> timedelta | None:
    """`remind:` as written ("1d", "off") → how long before a due day its nudge comes; None: never."""
    return None if text == "off" else parse_duration(text)
