"""Which real runs a trial replays: yesterday's step runs (or the ids named), of the alias tried
against when one is named, never the candidate's own runs."""

from __future__ import annotations

import logging
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from routine.config.model import Config
from routine.config.overrides import known_alias
from routine.errors import UsageError
from routine.journal import Journal, RunRecord
from routine.journal.trials import replayable
from routine.trials.replay import row_problem

log = logging.getLogger(__name__)


def runs_to_try(config: Config, journal: Journal, candidate: str, now: datetime, against: str | None = None,
                run_ids: list[str] | None = None, shift: int = 0) -> list[RunRecord]:
    """The runs ``candidate`` is to replay: ``run_ids`` (each an id or a unique prefix), else the
    step runs of the day ``runs_day`` names; only those of ``against``'s model when named."""
    known_alias(config, candidate)
    if against is not None:
        known_alias(config, against)
    if run_ids:
        runs = [_named(journal, run_id) for run_id in run_ids]
    else:
        runs = replayable(journal.db, *runs_day(config, now, shift))
    own = _models_of(config, candidate)
    theirs = _models_of(config, against) if against is not None else None
    return [r for r in _sound(runs) if r.model not in own and (theirs is None or r.model in theirs)]


def _sound(runs: list[RunRecord]) -> list[RunRecord]:
    """The runs whose journal rows can be replayed; each other one skipped with a sentence."""
    kept = []
    for run in runs:
        problem = row_problem(run)
        if problem:
            log.warning("run %s is skipped: %s (its journal row is damaged or was edited)", run.id, problem)
        else:
            kept.append(run)
    return kept


DAYS = {"yesterday": 0, "today": 1}  # how many days after the default (yesterday) the runs are from


def days_and_ids(runs: list[str]) -> tuple[int, list[str]]:
    """`--runs yesterday|today|ID…`: how many days after yesterday, and the run ids named."""
    return max((DAYS[r] for r in runs if r in DAYS), default=0), [r for r in runs if r not in DAYS]


def runs_day(config: Config, now: datetime, shift: int) -> tuple[datetime, datetime]:
    """Which runs `--runs yesterday|today` names (``shift`` from ``days_and_ids``), by the real
    clock ``now``: the one place the day is moved. ``now`` itself stays the time of the trial (what
    its proposal and journal rows are dated by)."""
    return day_before(config, now + timedelta(days=shift))


def day_before(config: Config, now: datetime) -> tuple[datetime, datetime]:
    """The local day before ``now``: its start and end."""
    tz = ZoneInfo(config.zone_name())
    today = datetime.combine(now.astimezone(tz).date(), time(), tz)
    return today - timedelta(days=1), today


def agent_runs(config: Config, journal: Journal, agent: str, now: datetime,
               run_ids: list[str] | None = None, shift: int = 0) -> list[RunRecord]:
    """The runs of ``agent`` a prompt trial replays: ``run_ids``, else its step runs of the day ``runs_day`` names."""
    return agent_runs_between(journal, agent, *runs_day(config, now, shift), run_ids)


def agent_runs_between(journal: Journal, agent: str, since: datetime, until: datetime,
                       run_ids: list[str] | None = None) -> list[RunRecord]:
    """``run_ids`` (each a run of ``agent``), else its step runs from ``since`` to ``until``."""
    if run_ids:
        runs = [_named(journal, run_id) for run_id in run_ids]
        other = [r.id for r in runs if r.agent != agent]
        if other:
            raise UsageError(f"Run {other[0]} is not a run of {agent}.", f"name runs of {agent} (`routine runs list`).")
        return runs
    return [r for r in replayable(journal.db, since, until) if r.agent == agent]


def _models_of(config: Config, alias: str) -> set[str]:
    return {d.model for d in config.models[alias].deployments}


def _named(journal: Journal, run_id: str) -> RunRecord:
    run = journal.get(run_id)
    if run is None:
        raise UsageError(f"No run {run_id!r} in the journal (or the prefix names more than one).",
                         "see `routine runs list` for the ids.")
    if run.kind != "step" or not isinstance(run.prompt, list):
        raise UsageError(f"Run {run.id} sent no model request to replay (a {run.kind} run, {run.status.value}).",
                         "name a step run that called a model (`routine runs show ID`).")
    return run
