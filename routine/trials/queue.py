"""Queueing trials and running one: claimed from the journal, replayed, its result stored in one
statement (a process stopped mid-trial leaves it `running`; `Trials.requeue_running` puts it back,
and no (run, candidate) pair is ever stored twice)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from routine.config.model import AgentSpec, Config
from routine.errors import RoutineError
from routine.journal import Journal, RunRecord
from routine.journal.trials import Trial, Trials
from routine.trials.replay import replay

if TYPE_CHECKING:
    from routine.models.client import ModelClient

log = logging.getLogger(__name__)


def queue(journal: Journal, runs: list[RunRecord], candidate: str) -> tuple[int, int]:
    """Queue ``candidate`` on ``runs``: (queued now, tried or queued before)."""
    return Trials(journal.db).queue([(r.id, r.agent, r.model) for r in runs], candidate)


def run_next(config: Config, agents: dict[str, AgentSpec], journal: Journal, client: ModelClient) -> Trial | None:
    """Claim the oldest queued trial and run it; the trial as stored after (None: none queued)."""
    trial = Trials(journal.db).claim()
    return None if trial is None else run_claimed(config, agents, journal, client, trial)


def run_claimed(config: Config, agents: dict[str, AgentSpec], journal: Journal, client: ModelClient,
                trial: Trial) -> Trial:
    """Run ``trial`` (claimed: `running`) and store what came of it; the trial as stored after."""
    trials = Trials(journal.db)
    run = journal.get(trial.run)
    try:
        if run is None:
            raise RoutineError(f"Run {trial.run} is no longer in the journal.", "nothing to replay.")
        if trial.candidate not in config.models:
            raise RoutineError(f"Model alias {trial.candidate!r} is no longer defined.", "queue it again once it is.")
        log.info("trial %d: %s's run %s on %s", trial.id, trial.agent, trial.run, trial.candidate)
        done = replay(config, agents, run, trial.candidate, client)
    except RoutineError as exc:
        log.warning("trial %d of %s on run %s failed: %s", trial.id, trial.candidate, trial.run, exc.message)
        trials.fail(trial.id, exc.message)
    else:
        trials.finish(trial.id, model=done.model, answer=done.answer, result=done.result())
    return trials.get(trial.id)
