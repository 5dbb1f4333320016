"""A question an agent asks the person (issue 45), as it asks it: a fenced ``ask`` block at the end
of a step's reply, or the ``ask_person`` tool's arguments. Read and checked here, once, for both:
the question, 2 to 4 choices or none (a free answer), a deadline (a duration, a time today, a date
and time; none: ``DEFAULT_WAIT``) and an optional default taken at it. The block goes through the
one bounded YAML reader (``outside.yamlread.load_yaml`` with the replies' budget: an alias bomb and deep nesting refused
there, a size cap here). What is done with a question: ``routine.runner.asking``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from routine.durations import human, parse_duration
from routine.errors import OutsideTextRefused
from routine.outside.yamlread import REPLY, load_yaml

MAX_BLOCK_CHARS = 4000  # an ask block longer than this is no question: refused before YAML reads it
MAX_QUESTION_CHARS = 500
MAX_CHOICE_CHARS = 80
DEFAULT_WAIT = timedelta(days=1)  # a question without `deadline:`
LONGEST_WAIT = timedelta(days=14)
_FENCE = re.compile(r"^```ask[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Ask:
    """A question as the step's reply asked it, its deadline resolved against the run's clock."""

    question: str
    choices: tuple[str, ...]
    deadline: datetime
    default: str | None


@dataclass(frozen=True)
class Answered:
    """What a resumed step is given: the question it asked and the person's answer (data)."""

    id: str  # the question's
    step: int  # the step that asked: it runs again with the answer, and may not ask again
    question: str
    answer: str
    origin: str


class BadAsk(ValueError):
    """An ask block routine cannot pose (one sentence; the step fails with it)."""


def ask_in(text: str, now: datetime) -> Ask | None:
    """The reply's ``ask`` block, or None when it asks nothing. A malformed one raises ``BadAsk``."""
    found = _FENCE.search(text)
    if found is None:
        return None
    block = found.group(1)
    if len(block) > MAX_BLOCK_CHARS:
        raise BadAsk(f"its ask block is longer than {MAX_BLOCK_CHARS} characters")
    try:
        data = load_yaml(block, "the ask block", REPLY)
    except OutsideTextRefused as exc:
        raise BadAsk(f"its ask block is not YAML ({exc.problem.message})") from None
    if not isinstance(data, dict):
        raise BadAsk("its ask block is not a list of `question:`, `choices:`, `deadline:` and `default:`")
    return ask_of(data, now)


def ask_of(data: dict[object, object], now: datetime) -> Ask:
    """A question from its fields (an ask block's keys, the tool's arguments), checked; else ``BadAsk``."""
    question = data.get("question")
    if not isinstance(question, str) or not question.strip():
        raise BadAsk("it gives no `question`")
    if len(question) > MAX_QUESTION_CHARS:
        raise BadAsk(f"its question is longer than {MAX_QUESTION_CHARS} characters")
    choices = _choices(data.get("choices"))
    default = data.get("default")
    default_text = None if default is None else _word(default) or None
    if default_text is not None and choices and not any(c.lower() == default_text.lower() for c in choices):
        raise BadAsk(f"its default {default_text!r} is none of its choices ({', '.join(choices)})")
    if default_text is not None and choices:
        default_text = next(c for c in choices if c.lower() == default_text.lower())
    return Ask(" ".join(question.split()), choices, deadline_of(data.get("deadline"), now), default_text)


def _choices(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not 2 <= len(value) <= 4:
        raise BadAsk("its `choices:` is not a list of 2 to 4 answers (leave it out for a free answer)")
    choices = tuple(_word(c) for c in value)
    if any(not c or len(c) > MAX_CHOICE_CHARS for c in choices) or len({c.lower() for c in choices}) < len(choices):
        raise BadAsk(f"its choices must be different words of at most {MAX_CHOICE_CHARS} characters")
    return choices


def _word(value: object) -> str:
    """A choice as the agent wrote it: YAML 1.1 reads an unquoted yes/no as true/false."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value).strip()


def deadline_of(value: object, now: datetime) -> datetime:
    """`deadline:` as written: a duration (2h), a time today (15:00; tomorrow once past), a date and
    time; none: ``DEFAULT_WAIT``. YAML 1.1 reads an unquoted 15:00 as the number 900 (base 60): it
    is taken back as the time it was."""
    if value is None:
        return now + DEFAULT_WAIT
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 24 * 60:
        value = f"{value // 60:02d}:{value % 60:02d}"
    if isinstance(value, datetime):
        value = value.isoformat(sep=" ")
    text = str(value).strip()
    try:
        when = now + parse_duration(text)
    except ValueError:
        when = _clock_time(text, now)
    if not now < when <= now + LONGEST_WAIT:
        raise BadAsk(f"its deadline {text!r} is not within the next {human(LONGEST_WAIT)}")
    return when


def _clock_time(text: str, now: datetime) -> datetime:
    try:
        if len(text) <= 5:
            at = datetime.combine(now.date(), time.fromisoformat(text.zfill(5)), now.tzinfo)
            return at if at > now else at + timedelta(days=1)
        found = datetime.fromisoformat(text)
    except ValueError:
        raise BadAsk(f"its deadline {text!r} is neither a duration (2h) nor a time (15:00, 2026-11-28 15:00)") \
            from None
    return found if found.tzinfo else found.replace(tzinfo=now.tzinfo)
