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

The block (or the ``ask_person`` tool's arguments) is read and checked by ``routine.person.asks``.
A one-off run (no block) has nothing to resume: its reply is written as it is.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from routine.config.notify import Topic
from routine.errors import UsageError
from routine.journal.questions import Questions
from routine.person.asks import Answered, Ask, BadAsk, ask_in
from routine.person.notifications import Message, notify
from routine.person.tickets import AnswerKind, Asked, Choice
from routine.vault.bookkeeping import Provenance
from routine.vault.context_items import ContextItem, Priority
from routine.vault.outline import Section
from routine.vault.question_notes import QuestionNote, write_question

if TYPE_CHECKING:
    from routine.config.model import Config
    from routine.journal import Journal
    from routine.runner.request import StepRequest

__all__ = ["Answered", "Ask", "BadAsk", "answer_item", "ask_in", "may_ask", "pose", "step_question"]


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
    # The phone offers the choices as buttons (ntfy shows the first three) and takes a typed reply (Telegram).
    asked = Asked(qid, tuple(Choice(AnswerKind.ANSWER, c, c) for c in ask.choices), typed=True)
    notify(config, Message(Topic.QUESTIONS, f"question:{qid}", ask.question, body, note=rel, asked=asked),
           now, journal.path)
    return qid


def step_question(req: StepRequest, text: str, now: datetime) -> Ask | None:
    """The question a block's step ends with (``runner.asking``); a one-off run has no block to
    resume, so its reply is written as it is. A step that asks again after it was answered fails."""
    if req.parent is None or req.block is None or req.step_index is None:
        return None
    try:
        ask = ask_in(text, now)
    except BadAsk as exc:
        raise UsageError(f"{req.agent.name} asked the person, but {exc}; nothing was written.",
                         "a question needs `question:`, 2 to 4 `choices:` or none, a `deadline:` (2h, 15:00) and "
                         "an optional `default:` among the choices.") from None
    if ask is not None and req.answer is not None and req.answer.step == req.step_index:
        raise UsageError(f"{req.agent.name} asked the person again after the answer "
                         f"{req.answer.answer!r}; a step asks once a run, so nothing was written.",
                         f"tell it in its task to use {{{{ answer }}}} once it is given ({req.agent.source}).")
    return ask


def may_ask(req: StepRequest) -> bool:
    """Whether the step may ask the person (`ask_person`): a block's step (its block can wait and
    resume), not given the answer to its own question already."""
    own_answer = req.answer is not None and req.answer.step == req.step_index
    return req.parent is not None and req.block is not None and req.step_index is not None and not own_answer


def answer_item(answered: Answered, order: int) -> ContextItem:
    """The person's answer as a piece of context the resumed step is given (kept before any other)."""
    text = f"You asked: {answered.question}\nThe person answered: {answered.answer}"
    return ContextItem("The person's answer to your question", Priority.STEP, [Section(None, 0, text)], None, order)
