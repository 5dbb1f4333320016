"""What every step is given before the runner takes it (``runner.request.StepSetup``): the runner
imports neither the scope resolver nor the projects, so the code that makes a runner hands it this
(``Runner(config, journal, setup=STEP_SETUP)``: `fire`, `ask`, `artifact qa`, the daemon).

- the agent's scopes of now (``routine.access.scoped``: assignments change in the vault, a task
  line, a project's members), a QA review's narrowed to its artifact and review note;
- for a run made for a project, its facts as template variables (``projects.runs.for_run``);
- the daily Plans' follow-through for the input `follow-through: 7d` (``projects.follow_through``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime

from routine.access import scoped
from routine.config.model import Config
from routine.projects import follow_through as ft
from routine.projects.runs import for_run
from routine.runner.request import StepRequest


class _Setup:
    def prepare(self, config: Config, req: StepRequest, now: datetime) -> tuple[StepRequest, str | None]:
        req = replace(req, agent=scoped(config, req.agent, review=req.review))
        return for_run(config.vault, req, now)

    def follow_through(self, config: Config, today: date, days: int) -> str:
        plans = ft.read_days(config.vault, config.layout.daily, today, days)
        return ft.follow_through(plans, today).summary()


STEP_SETUP = _Setup()
