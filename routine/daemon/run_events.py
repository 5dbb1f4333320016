"""What the daemon does with a run's events (``routine.runner.events``): a block's steps still to
come become its job's model set (the residency forecast's "needed now"), a failure has the
health monitor check now, a finished step has the knowledge graph read what it read and wrote,
a step that asked the person has its question's deadline armed.
"""

from __future__ import annotations

from typing import Callable, Iterable

from routine.daemon.work import Work
from routine.models.plan import ModelKey
from routine.runner.events import Asked, BlockStep, OnEvent, RunEvent, StepFailed, Wrote


class RunEvents:
    def __init__(self, model_keys: Callable[[Iterable[str]], tuple[ModelKey, ...]],
                 check_health: Callable[[], None], runs_finished: Callable[[], None]):
        self.model_keys = model_keys
        self.check_health = check_health
        self.runs_finished = runs_finished
        self.asked: Callable[[], None] = lambda: None  # a step asked the person: the daemon arms its deadline

    def listener(self, work: Work | None = None, then: OnEvent | None = None) -> OnEvent:
        """The ``on_event`` of a runner doing ``work``; ``then`` hears every event after us."""

        def listen(event: RunEvent) -> None:
            if work is not None and isinstance(event, BlockStep):
                work.models = self.model_keys(event.after)
            if isinstance(event, StepFailed):
                self.check_health()  # a dependency may be down: check now, not in a minute
            if isinstance(event, (Wrote, StepFailed)):
                self.runs_finished()
            if isinstance(event, Asked):
                self.asked()
            if then is not None:
                then(event)

        return listen
