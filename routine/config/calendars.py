"""`calendars:` in routine.yaml and the spans a step may ask of them (`calendar: today`): the
vocabulary, here so the schedule loader can check a step and ``routine.person.agenda`` read it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from enum import Enum

INPUT_PREFIX = "calendar:"  # the input form `calendar: SPAN`: no vault path, so no reads scope applies


@dataclass(frozen=True)
class CalendarSource:
    """A calendar in `calendars:`."""

    name: str
    source: str  # an .ics path (relative to routine.yaml) or an http(s) URL


class Span(str, Enum):
    TODAY = "today"
    TOMORROW = "tomorrow"
    THIS_WEEK = "this_week"  # today through Sunday

    def __str__(self) -> str:
        return self.value

    def days(self, today: date) -> tuple[date, date]:
        """(first, last) day, inclusive."""
        if self is Span.TODAY:
            return today, today
        if self is Span.TOMORROW:
            return today + timedelta(days=1), today + timedelta(days=1)
        return today, today + timedelta(days=6 - today.weekday())

    @classmethod
    def named(cls, word: str) -> Span | None:
        try:
            return cls(word.strip())
        except ValueError:
            return None

    @classmethod
    def choices(cls) -> str:
        return ", ".join(s.value for s in cls)
