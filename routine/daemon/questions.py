"""The daemon's side of questions agents ask the person (issue 45).

At start it resumes the blocks whose question was answered while no daemon ran, and arms one timer
for the soonest open deadline (a ``threading.Timer``: no polling; armed again when a step asks,
when a deadline passes, and when a test moves the driven clock). At a deadline the question takes
its default or its run ends ``skipped: no answer`` (``flows.questions.at_deadline``). An answer
(`routine answer` through the control socket, the question note's ``answer:`` property, a phone's
reply channel) goes through ``flows.questions.answer_question`` with ``resume``: the waiting block
run is queued on the one work queue and picks up at the step that asked, with the answer
(``runner.resume.resume_point``), on the shared model manager — so it loads its model only then.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from functools import partial
from typing import Callable, Protocol

from routine.daemon.ports import Jobs
from routine.daemon.work import Work
from routine.errors import RoutineError
from routine.flows.questions import AnswerOutcome, answer_question, at_deadline, use_resumer
from routine.journal import Journal
from routine.journal.questions import Question, Questions
from routine.journal.status import RunStatus
from routine.person.alerts import raise_alert
from routine.runner.block import BlockOutcome, run_block
from routine.runner.resume import resume_point

log = logging.getLogger(__name__)


class Host(Jobs, Protocol):
    @property
    def stopping(self) -> threading.Event: ...
    @property
    def clock(self) -> Callable[[], datetime]: ...
    def changed(self) -> None: ...


class QuestionKeeper:
    def __init__(self, host: Host):
        self.host = host
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    # --- life cycle ----------------------------------------------------------------------------------

    def start(self) -> None:
        """Resume what was answered while down; arm the soonest deadline (one past is due at once)."""
        journal = Journal()
        try:
            unresumed = Questions(journal.db).unresumed()
        finally:
            journal.close()
        for question in unresumed:
            log.info("question %s was answered while routine was not running; block %s goes on", question.id,
                     question.block)
            self.resume(question)
        use_resumer(self.resume)  # an answer given in this process (a phone's reply) resumes its block here
        self.arm()

    def stop(self) -> None:
        use_resumer(None)
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    # --- deadlines -----------------------------------------------------------------------------------

    def arm(self) -> None:
        """One timer, for the soonest open deadline (none open: none armed). Read and armed under one
        lock, so of two threads arming at once the later reading wins, never an older one."""
        with self._lock:
            journal = Journal()
            try:
                open_ = Questions(journal.db).open()
            finally:
                journal.close()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not open_ or self.host.stopping.is_set():
                return
            delay = max(0.0, (open_[0].deadline - self.host.clock()).total_seconds())
            self._timer = threading.Timer(delay, self._deadlines)
            self._timer.daemon = True
            self._timer.name = "question-deadline"
            self._timer.start()

    def _deadlines(self) -> None:
        """Every open question whose deadline has come: its default, or skipped; then the next one."""
        if self.host.stopping.is_set():
            return
        now = self.host.clock()
        journal = Journal()
        try:
            due = [q for q in Questions(journal.db).open() if q.deadline <= now]
            for question in due:
                outcome = at_deadline(self.host.live.config, question.id, now, resume=self.resume, journal=journal)
                if outcome is not None:
                    log.info("question %s at its deadline: %s", question.id, outcome.message)
        except Exception:  # a timer thread must not die silently: said, and the next deadline armed
            log.exception("question deadlines could not be handled")
        finally:
            journal.close()
        self.host.changed()
        self.arm()

    def asked(self) -> None:
        """A step asked: its deadline may be the soonest now; status and the dashboard say it waits."""
        self.arm()
        self.host.changed()

    # --- answers ---------------------------------------------------------------------------------------

    def answer(self, question_id: str, text: str, origin: str, note: str | None = None) -> AnswerOutcome:
        """The person's answer (CLI, note, phone): through the one path, its block resumed here."""
        outcome = answer_question(self.host.live.config, question_id, text, origin, resume=self.resume,
                                  now=self.host.clock(), note=note)
        if outcome.accepted:
            self.arm()
            self.host.changed()
        return outcome

    def resume(self, question: Question) -> bool:
        """Queue the waiting block run from the step that asked; False while the daemon stops (the
        next start resumes it)."""
        if self.host.stopping.is_set():
            return False
        block = self.host.live.schedules.blocks.get(question.block)
        work = Work(key=f"block:{question.block}", label=f"{question.block} answered ({question.id})",
                    models=self.host.model_keys(block.agents) if block else ())
        work.run = partial(self._run, question.id, work)
        self.host.queue.submit(work)
        return True

    def _run(self, question_id: str, work: Work) -> None:
        journal = Journal()
        try:
            questions = Questions(journal.db)
            question = questions.get(question_id)
            if question is None or not questions.resumed(question_id, self.host.clock()):
                return  # picked up already
            outcome = self._resume_block(journal, question, work)
        finally:
            journal.close()
        if outcome is not None:
            self.host.follow(question.block, outcome)

    def _resume_block(self, journal: Journal, question: Question, work: Work) -> BlockOutcome | None:
        live = self.host.live
        block = live.schedules.blocks.get(question.block)
        run = journal.get(question.run)
        if run is None:
            return None
        if block is None or question.step >= len(block.steps) or block.steps[question.step].agent != question.agent:
            self._not_resumed(journal, question, f"Block {question.block} changed or was removed since its "
                              f"step asked question {question.id}, so the answer could not be used.")
            return None
        try:
            resume = resume_point(journal, run, block)  # from the step that asked, with the answer
        except RoutineError as exc:
            self._not_resumed(journal, question, exc.message)
            return None
        runner = self.host.make_runner(journal, work=work)
        log.info("block %s resumes at step %d with the answer to %s", block.id, question.step, question.id)
        return run_block(runner, block, live.agents, trigger="answer", slot=run.slot, resume=resume)

    def _not_resumed(self, journal: Journal, question: Question, why: str) -> None:
        """The answered block cannot go on: its run fails with the sentence, and an alert says it."""
        log.error("question %s: block run %s not resumed: %s", question.id, question.run, why)
        journal.finish(question.run, RunStatus.FAILED.value, why)
        raise_alert(self.host.live.config, self.host.now_local(), f"{question.block} could not go on", why,
                    f"fire the block anew with `routine fire {question.block}`.", run_id=question.run,
                    affected=question.block)
