"""Deciding a proposal: approve (apply it to its target, or mark a conflict) or reject; then
archive it and journal who decided what. One path for the daemon (the person set `approved`
in Obsidian) and for `routine approve` (the CLI)."""

from __future__ import annotations

import logging
import shlex
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, TypedDict

from routine.access import resolve
from routine.config.model import AgentSpec, Config
from routine.errors import RoutineError, ScopeError, UsageError
from routine.journal.decisions import Decisions, Outcome
from routine.journal.keep import KeepRates, Via, Written
from routine.person.alerts import raise_alert
from routine.schedule import edit
from routine.tools.mcp_tools import run_approved
from routine.vault.approvals import MCP_KIND, SCHEDULE_KIND, apply, archive, clear_pointer, mark_conflict, read_proposal
from routine.vault.guard import Guard
from routine.vault.proposals import ProposalStatus
from routine.vault.provenance import PROPOSAL_TAG
from routine.vault.sections import prepare_content
from routine.vault.targets import WriteKind

if TYPE_CHECKING:
    from routine.journal import Journal
    from routine.vault.approvals import Applied, Proposal

if TYPE_CHECKING:
    from routine.journal import Journal

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Decided:
    outcome: Outcome
    message: str
    archived_as: str | None = None

    def summary(self) -> dict[str, str | None]:
        return {"outcome": self.outcome.value, "message": self.message, "archived_as": self.archived_as}


class _Record(TypedDict):
    """What every journaled decision on one proposal shares (``Decisions.record``'s arguments)."""

    proposal: str
    target: str | None
    section: str | None
    by: str
    run_id: str | None
    at: datetime
    decision: str


def decide(config: Config, agents: dict[str, AgentSpec], journal: Journal, rel: str, by: str, now: datetime,
           decision: bool | None = None, force: bool = False) -> Decided:
    """Carry out the decision on the proposal at ``rel``: ``decision`` from the CLI, else the
    note's own ``approved`` property.

    A proposal in conflict stays one: approving it again from the CLI needs ``force`` (it then
    replaces the target's text as it is now, which the archive keeps); in Obsidian the person
    sets `status: proposed` and `approved: true` again, which applies only if the region is
    unchanged since the conflict was recorded."""
    proposal = read_proposal(config.vault, rel)
    if proposal is None:
        raise UsageError(f"{rel} is not a routine proposal.", f"proposals are the notes in {config.layout.drafts}/ "
                         f"tagged {PROPOSAL_TAG}.")
    if proposal.status is not ProposalStatus.PROPOSED and decision is None:
        return Decided(Outcome.UNDECIDED, f"{rel} is {proposal.status or 'not open'}; nothing to do.")
    approved = proposal.approved if decision is None else decision
    if approved is None:
        return Decided(Outcome.UNDECIDED, f"{rel} has not been decided yet (set `approved: true` or `false`).")
    record = _Record(proposal=proposal.rel, target=proposal.target_rel, section=proposal.section, by=by,
                     run_id=str(proposal.properties.get("run") or "") or None, at=now,
                     decision="approved" if approved else "rejected")
    decisions = Decisions(journal.db)
    if not approved:
        clear_pointer(config.vault, proposal)  # first: once the proposal is gone, the target is tidy too
        archived = archive(config.vault, proposal, config.layout.archive, ProposalStatus.REJECTED, by, now)
        decisions.record(outcome=Outcome.REJECTED, archived_as=archived, **record)
        return Decided(Outcome.REJECTED, f"Rejected; the proposal is in {archived}.", archived)
    if approved and proposal.status is ProposalStatus.CONFLICT and decision is not None and not force:
        why = proposal.properties.get("conflict") or "the target changed"
        return Decided(Outcome.CONFLICT, f"{rel} is in conflict ({why}), so nothing was applied. To apply it over "
                                         "the text there now, run "
                                         f"`routine approve {shlex.quote(rel)} --force` (the replaced text is kept in "
                                         "the archived proposal).")
    agent = agents.get(proposal.agent)
    try:
        if not proposal.made_by_routine:
            raise ScopeError(
                f"{rel} is not a proposal routine made (it has no valid seal: an agent or a copy wrote it), "
                "so it was not applied.",
                "copy what you want from it by hand, or reject it.",
            )
        if proposal.properties.get("kind") == SCHEDULE_KIND:  # advice to a schedule file, outside the vault
            return _schedule(config, agents, decisions, proposal, record, by, now)
        if agent is None:
            raise ScopeError(f"The agent {proposal.agent!r} that wrote this proposal no longer exists.",
                             "apply the text by hand, or restore the agent note.")
        if proposal.properties.get("kind") == MCP_KIND:  # a call to an MCP server's tool: run it now
            return _mcp_call(config, agent, decisions, proposal, record, by, now)

        access = resolve(config, agent, approving=True)  # its proposal-only case files count as writable
        applied = apply(config.vault, proposal, access.write_globs, now, Guard.of(config), force=force)
    except RoutineError as exc:
        decisions.record(outcome=Outcome.REFUSED, detail=exc.message, **record)
        alert = raise_alert(config, now, "proposal not applied", f"{proposal.rel}: {exc.message}", exc.fix)
        log.warning("proposal %s refused: %s", proposal.rel, exc.message)
        return Decided(Outcome.REFUSED, f"Not applied: {exc.message}" + (f" (alert: {alert})" if alert else ""))
    if not applied.ok and applied.gone:
        mark_conflict(config.vault, proposal, applied.message, now)
        decisions.record(outcome=Outcome.CONFLICT, detail=applied.message, **record)
        log.info("proposal %s not applied: %s", proposal.rel, applied.message)
        return Decided(Outcome.CONFLICT, f"Not applied: {applied.message}. Copy the text from {proposal.rel} into "
                                         "the note where it belongs now, or reject the proposal.")
    if not applied.ok:
        mark_conflict(config.vault, proposal, applied.message, now)
        decisions.record(outcome=Outcome.CONFLICT, detail=applied.message, **record)
        log.info("proposal %s not applied: %s", proposal.rel, applied.message)
        return Decided(Outcome.CONFLICT, f"Not applied: {applied.message}. The proposal is marked as a conflict and "
                                         f"stays in {config.layout.drafts}/; to apply it over the text there now, "
                                         f"run `routine approve {shlex.quote(proposal.rel)} --force`.")
    archived = archive(config.vault, proposal, config.layout.archive, ProposalStatus.APPLIED, by, now, applied.replaced)
    _written(journal, proposal, applied, record["run_id"], now)
    decisions.record(outcome=Outcome.APPLIED, archived_as=archived, detail=applied.message, **record)
    log.info("proposal %s applied: %s", proposal.rel, applied.message)
    replaced = ""
    if force and applied.replaced:
        first = applied.replaced.strip().splitlines()[0][:80]
        replaced = f" Forced: it replaced {len(applied.replaced.strip().splitlines())} line(s) starting {first!r}."
    return Decided(Outcome.APPLIED, f"{applied.message}{replaced} The proposal is in {archived}.", archived)


def _schedule(config: Config, agents: dict[str, AgentSpec], decisions: Decisions, proposal: Proposal,
              record: _Record, by: str, now: datetime) -> Decided:
    """An approved change to a schedule block (routine.schedule.edit): written into its file, which
    the daemon reloads as it reloads any edit; the proposal archived."""
    change = edit.from_proposal(proposal.target_rel or "", proposal.section, proposal.text)
    message = edit.apply(config, agents, change, str(proposal.base or ""), now)
    archived = archive(config.vault, proposal, config.layout.archive, ProposalStatus.APPLIED, by, now)
    decisions.record(outcome=Outcome.APPLIED, archived_as=archived, detail=message, **record)
    log.info("proposal %s applied: %s", proposal.rel, message)
    return Decided(Outcome.APPLIED, f"{message} The proposal is in {archived}.", archived)


MAX_RESULT_SHOWN = 600  # characters of an approved call's result in the decision's message and journal


def _mcp_call(config: Config, agent: AgentSpec, decisions: Decisions, proposal: Proposal, record: _Record, by: str,
              now: datetime) -> Decided:
    """An approved call to an MCP server's tool: run with the arguments as the person left them, its
    result journaled with the decision; the proposal archived."""
    result = run_approved(config, agent, proposal.section, proposal.text, now)
    shown = result if len(result) <= MAX_RESULT_SHOWN else result[:MAX_RESULT_SHOWN] + " […]"
    archived = archive(config.vault, proposal, config.layout.archive, ProposalStatus.APPLIED, by, now)
    decisions.record(outcome=Outcome.APPLIED, archived_as=archived, detail=f"ran {proposal.section}: {shown}",
                     **record)
    log.info("proposal %s applied: ran %s", proposal.rel, proposal.section)
    return Decided(Outcome.APPLIED, f"Ran {proposal.section}; it answered: {shown} The proposal is in {archived}.",
                   archived)


def _written(journal: Journal, proposal: Proposal, applied: Applied, run_id: str | None, now: datetime) -> None:
    """An approved section is kept in the journal as written, through approval, for its keep-rate."""
    if proposal.kind is not WriteKind.SECTION or not applied.target:
        return

    run = journal.get(run_id) if run_id else None
    written = Written(proposal.agent, applied.target, " ".join(proposal.section_named().split()),
                      prepare_content(proposal.text), now, Via.APPROVAL, run.block if run else None, run_id)
    KeepRates(journal.db).record(written, applied.replaced)

