"""`notify:` in routine.yaml as the code uses it: where messages go (Apprise URLs), about what,
and when not (quiet hours). ``Topic`` is the one list of what can notify (the schema's enum)."""

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
    ALERTS = "alerts"        # an alert opened (one message per cause), and when it resolves
    PROPOSALS = "proposals"  # a proposal waits for the person's approval
    TASKS = "tasks"          # a project task assigned to a person, and a reminder when it is due
    READY = "ready"          # a block named in `notify.ready` wrote its note (with its first lines)

    def __str__(self) -> str:
        return self.value

    @property
    def priority(self) -> Priority:
        """A message's priority unless it says otherwise: an outage or failure high, something
        waiting for the person normal, a note ready to read low."""
        return _PRIORITY[self]


_PRIORITY = {Topic.ALERTS: Priority.HIGH, Topic.PROPOSALS: Priority.NORMAL, Topic.TASKS: Priority.NORMAL,
             Topic.READY: Priority.LOW}


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
