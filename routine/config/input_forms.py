"""The syntax of an `inputs:` entry, declared once: the form an entry takes (by its prefix or
its shape), what a form's words mean, and the one sentence when they mean nothing. Below both
the schedule loader, which checks an entry as written, and the runner, which expands a rendered
entry and gathers it (``routine.runner.inputs``, ``routine.runner.context``).
"""

from __future__ import annotations

import re
from enum import Enum

from routine.config.calendars import INPUT_PREFIX, Span


class Kind(Enum):
    NOTE = "note"
    GLOB = "glob"
    LINKS = "links"
    STEP = "step"
    JOURNAL = "journal"
    CALENDAR = "calendar"
    FOLLOW_THROUGH = "follow-through"


# The forms told by a prefix, and the prefix of each (the rest is the form's own words).
PREFIXES = {Kind.JOURNAL: "journal:", Kind.FOLLOW_THROUGH: "follow-through:", Kind.CALENDAR: INPUT_PREFIX,
            Kind.LINKS: "links:"}
STEP_REF = re.compile(r"steps\.([A-Za-z0-9_-]+)\.output")
_DAYS = re.compile(r"^\s*(\d+)\s*d?\s*$")
_GLOB = "*?["


def kind_of(text: str) -> tuple[Kind, str]:
    """An entry's form and its own words (the prefix taken off): a step's output by its
    reference, a prefixed form by its prefix, a glob by its wildcards, else a note."""
    if STEP_REF.search(text):
        return Kind.STEP, text
    text = text.strip()
    for kind, prefix in PREFIXES.items():
        if text.startswith(prefix):
            return kind, text.removeprefix(prefix).strip()
    return (Kind.GLOB if any(ch in text.partition("#")[0] for ch in _GLOB) else Kind.NOTE), text


def days(words: str) -> int | None:
    """The days of `journal: 7d`; None when the words are no number of days."""
    match = _DAYS.match(words)
    return int(match[1]) if match else None


def problem(text: str, where: str = "") -> tuple[str, str] | None:
    """What is wrong with an entry's words, as (sentence, fix), the entry said to be ``where``
    when given; None when they mean something."""
    kind, words = kind_of(text)
    at = f" in {where}" if where else ""
    if kind is Kind.CALENDAR and Span.named(words) is None:
        return f"`calendar: {words}`{at} is not a span of days.", f"write one of: {Span.choices()}."
    if kind in (Kind.JOURNAL, Kind.FOLLOW_THROUGH) and days(words) is None:
        prefix = PREFIXES[kind]
        return f"`{prefix} {words}`{at} is not a number of days.", f"write `{prefix} 7d` (the last 7 days)."
    return None
