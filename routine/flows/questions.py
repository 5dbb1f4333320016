"""The person answers a step's question (issue 45): the one path every answer takes, whether it
comes from `routine answer ID TEXT` (through the daemon's control socket, else straight into the
journal), the question note's ``answer:`` property (the daemon's vault watcher), a phone's reply
channel (``routine.flows.answers``), or the deadline (its default).

``answer_question(config, question_id, text, origin, resume=…)`` checks the answer (a question
that exists and is still open, one of its choices when it has some, a bounded text), settles the
question once (two answers racing: one wins, the other is refused with a sentence), marks the step
run that asked ``answered``, says so in the note, and hands the question to ``resume`` — the
daemon's (``routine.daemon.questions.QuestionKeeper.resume``, also registered with ``use_resumer``
so a call in the daemon's process without one resumes too), which queues the block run from that
step with the answer. Where no daemon runs, the daemon resumes it at its start.
``at_deadline`` is what the deadline does: the default taken (origin ``deadline``), else the run
ends ``skipped: no answer``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol
from zoneinfo import ZoneInfo

from routine.config.model import Config
from routine.journal import Journal
from routine.journal.questions import Question, Questions, QuestionState
from routine.journal.status import RunStatus, Skip
from routine.vault.question_notes import MAX_ANSWER_CHARS, mark_settled

log = logging.getLogger(__name__)

DEADLINE = "deadline"  # the origin of a default taken at the deadline


class Resumer(Protocol):
    """Queue the waiting block run of an answered question; False when it cannot now (no daemon)."""

    def __call__(self, question: Question) -> bool: ...


_resumer: Resumer | None = None  # the running daemon's (``use_resumer``), as ``daemon.timers`` keeps its ``on_due``


def use_resumer(resume: Resumer | None) -> None:
    """The daemon, at start (and None at its stop): answers given in its process without a
    ``resume`` of their own (a phone's reply channel) resume their block through it."""
    global _resumer
    _resumer = resume


@dataclass(frozen=True)
class AnswerOutcome:
    """What came of an answer: accepted (and whether its block was resumed now) or refused, with
    the one sentence the person is told either way."""

    accepted: bool
    message: str
    question: Question | None = None
    answer: str | None = None
    resumed: bool = False

    def summary(self) -> dict[str, object]:
        """As `routine answer --json` and the control socket show it."""
        return {"accepted": self.accepted, "message": self.message, "answer": self.answer, "resumed": self.resumed,
                "question": self.question.as_dict() if self.question else None}


def answer_question(config: Config, question_id: str, text: str, origin: str, *, resume: Resumer | None = None,
                    now: datetime | None = None, journal: Journal | None = None,
                    note: str | None = None) -> AnswerOutcome:
    """Apply the person's answer ``text`` to question ``question_id`` (see the module). ``origin``:
    where it came from (cli, note, ntfy, telegram, deadline), journaled with it; ``note``: the
    question note it was read from, which must be that question's own."""
    own = journal is None
    journal = journal or Journal()
    try:
        return _answer(config, journal, question_id.strip(), text, origin, resume or _resumer,
                       now or datetime.now(timezone.utc), note)
    finally:
        if own:
            journal.close()


def _answer(config: Config, journal: Journal, qid: str, text: str, origin: str, resume: Resumer | None,
            now: datetime, note: str | None) -> AnswerOutcome:
    questions = Questions(journal.db)
    question = questions.get(qid) if qid else None
    if question is None or (note is not None and question.note != note):
        return _refused(f"No question {qid!r} waits for an answer; nothing was answered. "
                        "`routine status` lists the questions that wait on you.")
    if question.state is not QuestionState.OPEN:
        return _refused(_settled_already(config, question), question)
    chosen = _chosen(question, text)
    if isinstance(chosen, AnswerOutcome):
        return chosen
    if not questions.settle(qid, QuestionState.ANSWERED, chosen, origin, now):
        return _refused(_settled_already(config, questions.get(qid) or question), question)
    journal.update(question.step_run, status=RunStatus.ANSWERED.value)
    if question.note:
        mark_settled(config.vault, question.note, QuestionState.ANSWERED.value, chosen, origin, now)
    settled = questions.get(qid) or question
    log.info("question %s answered (%s): %s", qid, origin, chosen)
    resumed = bool(resume and resume(settled))
    then = "the block goes on from the step that asked" if resumed else \
        "the block goes on from the step that asked once the daemon runs (`routine run`)"
    return AnswerOutcome(True, f"Question {qid} answered: {chosen!r}; {then}.", settled, chosen, resumed)


def _chosen(question: Question, text: str) -> str | AnswerOutcome:
    """The answer as it is kept: one of the choices (by its words, any case, or its number), or
    the free text, bounded; else the refusal."""
    given = " ".join(text.split())
    if not given:
        return _refused(f"An empty answer to question {question.id} is no answer; nothing was answered.", question)
    if not question.choices:
        return given[:MAX_ANSWER_CHARS]
    for number, choice in enumerate(question.choices, 1):
        if given.lower() in (choice.lower(), str(number)):
            return choice
    return _refused(f"{given[:80]!r} is none of the choices of question {question.id} "
                    f"({', '.join(question.choices)}); nothing was answered.", question)


def _settled_already(config: Config, question: Question) -> str:
    if question.state is QuestionState.EXPIRED:
        return (f"Question {question.id} is closed: its deadline passed without an answer and the block was "
                "skipped; a late answer is refused.")
    answered = question.answered_at.astimezone(ZoneInfo(config.zone_name())) if question.answered_at else None
    when = f" at {answered:%Y-%m-%d %H:%M %Z}" if answered else ""
    return (f"Question {question.id} was answered already ({question.answer!r}, by {question.origin}{when}); "
            "a second answer is refused.")


def _refused(message: str, question: Question | None = None) -> AnswerOutcome:
    log.info("answer refused: %s", message)
    return AnswerOutcome(False, message, question)


def at_deadline(config: Config, question_id: str, now: datetime, *, resume: Resumer | None = None,
                journal: Journal | None = None) -> AnswerOutcome | None:
    """The question's deadline has come: its default is the answer, else its block run ends
    ``skipped: no answer``. None when it is not open or not due (answered meanwhile, a clock that
    fired early)."""
    own = journal is None
    journal = journal or Journal()
    try:
        question = Questions(journal.db).get(question_id)
        if question is None or question.state is not QuestionState.OPEN or now < question.deadline:
            return None
        if question.default is not None:
            return _answer(config, journal, question.id, question.default, DEADLINE, resume, now, None)
        return _expire(config, journal, question, now)
    finally:
        if own:
            journal.close()


def _expire(config: Config, journal: Journal, question: Question, now: datetime) -> AnswerOutcome | None:
    if not Questions(journal.db).settle(question.id, QuestionState.EXPIRED, None, DEADLINE, now):
        return None
    why = f"skipped: no answer to question {question.id} by its deadline"
    for run_id in (question.step_run, question.run):
        record = journal.get(run_id)
        kept = record.details if record is not None and isinstance(record.details, dict) else {}
        journal.finish(run_id, RunStatus.SKIPPED.value, why,
                       details={**kept, "skipped": Skip.NO_ANSWER.value, "question": question.id})
    if question.note:
        mark_settled(config.vault, question.note, QuestionState.EXPIRED.value, None, DEADLINE, now)
    log.info("question %s: no answer by its deadline; block run %s skipped", question.id, question.run)
    return AnswerOutcome(False, f"Question {question.id} had no answer by its deadline; block {question.block} "
                                "was skipped.", question)
