"""A variant of an agent note tried, recorded and, when it did better, proposed: the one path for
`routine agent try` (in its own process) and for the daemon's trials window (a queued variant:
a weekly step's advice, or `agent try` while the daemon runs). A variant that did not do better
is recorded with its figures and never proposed, so nothing can apply it; a proposal carries the
figures and applies as any proposal to a note does (`routine approve`, or `approved: true`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from routine.config.model import AgentSpec, Config
from routine.config.notify import Topic
from routine.errors import RoutineError
from routine.journal import Journal
from routine.journal.prompt_trials import PromptTrial, PromptTrials, QueuedVariant, version_of
from routine.person.notifications import Message, notify, proposal_waiting
from routine.trials.select import agent_runs_between
from routine.trials.variants import Verdict, try_variant, variant_of_body
from routine.vault.frontmatter import parse_frontmatter
from routine.vault.notes import load_note_text
from routine.vault.proposals import write_proposal

if TYPE_CHECKING:
    from routine.journal import RunRecord
    from routine.models.client import ModelClient

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    proposal: str | None  # the proposal to the agent note (only when the variant did better)


def judge(config: Config, journal: Journal, client: ModelClient, agent: AgentSpec, variant: AgentSpec,
          runs: list[RunRecord], origin: str, why: str, now: datetime) -> Outcome:
    """Try ``variant`` on ``runs``, propose it when it did better, record the trial either way."""
    verdict = try_variant(config, agent, variant, runs, client)
    proposal = _propose(config, agent, variant, verdict, why, now) if verdict.better else None
    PromptTrials(journal.db).record(PromptTrial(
        agent.name, version_of(agent.system_prompt), version_of(variant.system_prompt), origin,
        len(verdict.tried), verdict.passed("current"), verdict.passed("variant"), verdict.closeness("current"),
        verdict.closeness("variant"), verdict.better, proposal), now)
    return Outcome(verdict, proposal)


def run_queued(config: Config, agents: dict[str, AgentSpec], journal: Journal, client: ModelClient,
               queued: QueuedVariant, now: datetime) -> Outcome:
    """Try one queued variant on its runs (the ones named, else the agent's step runs in its span)."""
    agent = agents.get(queued.agent)
    if agent is None:
        raise RoutineError(f"Agent {queued.agent} is no longer defined.", "nothing to try the change on.")
    variant = variant_of_body(config, agent, queued.body, queued.origin)
    runs = agent_runs_between(journal, agent.name, queued.since, queued.until, list(queued.run_ids))
    if not runs:
        raise RoutineError(f"{agent.name} has no step runs from {queued.since:%Y-%m-%d} to {queued.until:%Y-%m-%d} "
                           f"to try the change ({queued.origin}) on.", "fire the agent, then queue it again.")
    outcome = judge(config, journal, client, agent, variant, runs, queued.origin, queued.why, now)
    _push(config, agent, queued, outcome, now)
    log.info("prompt trial of %s (%s): %s; %s", agent.name, queued.origin, outcome.verdict.figures(),
             f"proposed in {outcome.proposal}" if outcome.proposal else "not better, so not proposed")
    return outcome


def _push(config: Config, agent: AgentSpec, queued: QueuedVariant, outcome: Outcome, now: datetime) -> None:
    """What came of a change the daemon tried, pushed once: better (the proposal, with its buttons)
    or not better. One that could not be tried is an alert (``daemon.trials``), pushed as alerts are."""
    figures = outcome.verdict.figures()
    if outcome.proposal:
        notify(config, proposal_waiting(config, outcome.proposal, f"{agent.name}'s change did better: approve it?",
                                        f"{queued.origin}: {figures}."), now)
    else:
        notify(config, Message(Topic.TRIALS, f"prompt-trial:{agent.name}:{version_of(queued.body)}",
                               f"{agent.name}'s change was not better", f"{queued.origin}: {figures}; nothing "
                               "was proposed and the agent note is unchanged."), now)


def _propose(config: Config, agent: AgentSpec, variant: AgentSpec, verdict: Verdict, why: str,
             now: datetime) -> str:
    note = load_note_text(config.vault / agent.source)
    current = parse_frontmatter(note.text).body if note is not None else ""
    reason = (f"{why.rstrip('.')}. " if why else "") + (
        f"A prompt trial on {len(verdict.tried)} of {agent.name}'s real runs did better with the variant "
        f"({verdict.figures()}). Approving replaces the instructions of {agent.source} with it; its "
        "properties (model, reads, writes) stay as they are.")
    return write_proposal(config.vault, config.layout.drafts, target_rel=agent.source, section=None,
                          proposed=variant.system_prompt.strip() + "\n", current=current, reason=reason,
                          agent=agent.name, model=f"prompt trial {version_of(variant.system_prompt)}",
                          run=f"trial-{now:%Y%m%d-%H%M%S}", generated=now, sources=[], kind="note",
                          target_existed=True)
