"""A step that asks the person (issue 45). A block's step may end its reply with one fenced
``ask`` block instead of its output::

    ```ask
    question: Which meeting matters more today?
    choices: [Board prep, Hiring sync]
    deadline: 2h          # or a time today (15:00), or a date and time (2026-11-28 15:00)
    default: Board prep   # taken at the deadline; without it the run ends `skipped: no answer`
    ```

The step writes nothing; its run and its block run wait (``RunStatus.WAITING``), holding no model
(the model's lease ended with the call). ``pose`` records the question in the journal, writes its
``Inbox/`` note and pushes it (topic ``questions``, the choices on the message); the daemon arms
its deadline. The answer resumes the block from this step (``routine.flows.questions``): the step
runs again with ``{{ answer }}`` for the author's templates and the question and answer given as a
piece of context (data, never a template), and so do the steps after it.

The block is read with the one bounded YAML reader (``config.yamlfile.parse_yaml``: a size cap
here, an alias bomb and deep nesting refused there). A one-off run (no block) has nothing to resume:
its reply is written as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING

from routine.config.notify import Topic
from routine.config.yamlfile import YamlSyntaxError, parse_yaml
from routine.durations import human, parse_duration
from routine.journal.questions import Questions
from routine.person.notifications import Message, notify
from routine.vault.bookkeeping import Provenance
from routine.vault.context_items import ContextItem, Priority
from routine.vault.outline import Section
from routine.vault.question_notes import QuestionNote, write_question

if TYPE_CHECKING:
    from routine.config.model import Config
    from routine.journal import Journal

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
        data = parse_yaml(block, "the ask block").data
    except YamlSyntaxError as exc:
        raise BadAsk(f"its ask block is not YAML ({exc.problem.message})") from None
    if not isinstance(data, dict):
        raise BadAsk("its ask block is not a list of `question:`, `choices:`, `deadline:` and `default:`")
    return _ask(data, now)


def _ask(data: dict[object, object], now: datetime) -> Ask:
    question = data.get("question")
    if not isinstance(question, str) or not question.strip():
        raise BadAsk("its ask block has no `question:`")
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


def pose(config: Config, journal: Journal, ask: Ask, *, run: str, step_run: str, block: str, step: int,
         agent: str, model: str, now: datetime) -> str:
    """Record the question, write its note, push it; its id. The daemon arms the deadline."""
    questions = Questions(journal.db)
    qid = questions.add(run=run, step_run=step_run, block=block, step=step, agent=agent, question=ask.question,
                        choices=ask.choices, deadline=ask.deadline, default=ask.default, now=now)
    local = ask.deadline.astimezone(now.tzinfo)
    then = f"the answer *{ask.default}* is taken" if ask.default else "the block is skipped"
    rel = write_question(config.vault, QuestionNote(qid, agent, block, ask.question, ask.choices,
                                                    f"{local:%Y-%m-%d %H:%M}", then),
                         Provenance(agent=agent, model=model, run=step_run, generated=now))
    questions.set_note(qid, rel)
    body = (f"{agent} asks ({block}). " + (f"Choices: {' / '.join(ask.choices)}. " if ask.choices else "")
            + f"Until {local:%H:%M}, then {then.replace('*', '')}. Answer: routine answer {qid} TEXT")
    notify(config, Message(Topic.QUESTIONS, f"question:{qid}", ask.question, body, note=rel, choices=ask.choices),
           now, journal.path)
    return qid


def answer_item(answered: Answered, order: int) -> ContextItem:
    """The person's answer as a piece of context the resumed step is given (kept before any other)."""
    text = f"You asked: {answered.question}\nThe person answered: {answered.answer}"
    return ContextItem("The person's answer to your question", Priority.STEP, [Section(None, 0, text)], None, order)
