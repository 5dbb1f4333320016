"""`routine runs retry ID`: where a failed or interrupted block run picks up (and a waiting one,
once the person answered its question: ``routine.flows.questions``).

The steps that ended ok keep their outputs (from the journal) and are not run again; the
first step without a good ending runs next, under the same block run, with the dates of the day
the run began (its `{{ today }}` is that day, not the day of the retry).
"""

from __future__ import annotations

from datetime import datetime

from routine.errors import UsageError
from routine.journal import Journal
from routine.journal.questions import Questions
from routine.journal.runs import RunRecord
from routine.journal.status import RunStatus, succeeded
from routine.person.asks import Answered
from routine.runner.block import Resume
from routine.schedule.model import Block

RESUMABLE = (RunStatus.FAILED, RunStatus.INTERRUPTED)


def block_run_of(journal: Journal, run: RunRecord) -> RunRecord:
    """The block run itself, given it or one of its steps; a one-off agent run is refused."""
    if run.kind == "step" and run.parent:
        parent = journal.get(run.parent)
        if parent is not None:
            run = parent
    if run.kind != "block":
        raise UsageError(f"Run {run.id} is a one-off run of {run.agent}, not a block; there is nothing to resume.",
                         f"run it again with `routine fire {run.agent}`.")
    if run.status is RunStatus.WAITING:
        raise UsageError(f"Block run {run.id} ({run.block}) waits for your answer to its question.",
                         "answer it with `routine answer ID TEXT` (`routine status` lists what waits on you).")
    if run.status not in RESUMABLE:
        raise UsageError(
            f"Block run {run.id} ({run.block}) is {run.status}; only a failed or interrupted one is resumed.",
            f"to run the block anew, `routine fire {run.block}`.",
        )
    return run


def resume_point(journal: Journal, run: RunRecord, block: Block) -> Resume:
    """The first step to run again, and what the steps before it gave. A block run whose step asked
    the person and was answered (``routine.flows.questions``) goes on from that step, and it and the
    steps after it are given the answer — also when `runs retry` picks such a run up later."""
    good = {c.step: c for c in journal.children(run.id) if succeeded(c.status)}
    answer = answer_of(journal, run.id)
    start = answer.step if answer is not None and answer.step not in good else \
        next((i for i in range(len(block.steps)) if i not in good), len(block.steps))
    for i in range(start):
        if i in good and good[i].agent != block.steps[i].agent:
            raise UsageError(f"Block {block.id} changed since run {run.id}: its step {i} is now "
                             f"{block.steps[i].agent}, then it was {good[i].agent}.",
                             f"run the block anew with `routine fire {block.id}`.")
    if start == len(block.steps):
        raise UsageError(f"Every step of block run {run.id} ended well; there is nothing to resume.",
                         f"to run the block anew, `routine fire {block.id}`.")
    # The same agents (checked above); a branch not taken gave nothing.
    prior = {block.steps[i].agent: good[i].output or "" for i in range(start) if i in good}
    wrote = tuple(good[i].wrote["path"] for i in range(start) if i in good and isinstance(good[i].wrote, dict))
    # The dates of the run as it began (its day's notes), not of the retry.
    return Resume(parent=run.id, start=start, prior=prior, wrote=wrote, as_of=datetime.fromisoformat(run.started_at),
                  answer=answer)


def answer_of(journal: Journal, run_id: str) -> Answered | None:
    """The person's answer a block run carries: its latest answered question, as its steps get it."""
    question = Questions(journal.db).answered_for(run_id)
    if question is None or question.answer is None:
        return None
    return Answered(question.id, question.step, question.question, question.answer, question.origin or "")
