"""A schedule block: its steps in order, each seeing the earlier outputs.

A failed step stops the block; the steps after it are journaled as skipped, with the reason,
so every step of every slot is explained in the journal. A step that failed for a passing
reason (``RoutineError.transient``) is tried again per the block's ``retry:`` policy, each
attempt a step run under the same block run; `routine runs retry ID` resumes a failed block
from its failed step (``Resume``), the earlier steps' outputs reused.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from routine.config.model import AgentSpec, StepSpec, WriteSpec
from routine.errors import UsageError
from routine.journal import Journal
from routine.journal.runs import RunDetails
from routine.journal.status import RunStatus, Skip
from routine.person.asks import Answered
from routine.runner.advice import queue_advice
from routine.runner.events import BlockStarted, BlockStep, Retrying
from routine.runner.request import StepOutcome, StepRequest
from routine.runner.step import Runner, local_time
from routine.schedule.model import Block, RetryPolicy


@dataclass
class BlockOutcome:
    run_id: str | None
    status: RunStatus  # ok | failed | dry-run | waiting (a step asked the person)
    steps: list[StepOutcome] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)  # by agent: the steps that ran and ended without error


@dataclass(frozen=True)
class Resume:
    """Where a failed or interrupted block run picks up (see ``routine.runner.resume``)."""

    parent: str  # the block run, which the new step runs join
    start: int  # the first step to run again
    prior: dict[str, str]  # the earlier steps' outputs, by agent name
    wrote: tuple[str, ...] = ()  # what the earlier steps wrote
    as_of: datetime | None = None  # when the block run started: the day its notes belong to
    answer: Answered | None = None  # the person answered step ``start``'s question: it and the later steps get it


def run_block(runner: Runner, block: Block, agents: dict[str, AgentSpec], trigger: str = "manual",
              slot: str | None = None, dry_run: bool = False, stream: bool = False,
              run_id: str | None = None, resume: Resume | None = None,
              upstream: dict[str, str] | None = None, payload: str = "",
              variables: dict[str, object] | None = None, details: RunDetails | None = None) -> BlockOutcome:
    """``upstream``: a chained block's (``after:``) view of the run it follows, its steps' outputs by
    agent, which its own steps see as ``{{ steps.AGENT.output }}``. ``payload`` and ``variables``:
    an outside event's (``schedule.events``), given to every step. ``details``: the block run's own
    (an event's run a pause held: ``held``)."""
    journal = None if dry_run else runner.runs
    if upstream is None and block.after is not None:
        upstream = _last_run_followed(journal, block)
    # A block's {{ today }} is the day it started, through every step, retry and resume: a block
    # retried after midnight (or `runs retry` the next morning) finishes the notes of its own day.
    as_of = local_time(runner.config, resume.as_of) if resume is not None and resume.as_of else runner.clock()
    parent = _begin(journal, block, trigger, slot, run_id, resume, as_of)
    if parent is not None and details and journal is not None:
        journal.update(parent, details=details)
    runner.on_event(BlockStarted(parent, block.id, len(block.steps)))
    outcome = BlockOutcome(parent, RunStatus.DRY_RUN if dry_run else RunStatus.OK)
    prior: dict[str, str] = {**(upstream or {}), **(resume.prior if resume else {})}
    failed_at: int | None = None
    for index, step in enumerate(block.steps):
        if resume is not None and index < resume.start:
            continue
        agent = agents[step.agent]
        if failed_at is not None:
            if parent is not None:  # a dry run journals nothing
                runner.runs.record(agent=agent.name, trigger=trigger, status="skipped", block=block.id, step=index,
                                   parent=parent, slot=slot, details={"skipped": Skip.AFTER_FAILURE},
                                   id_at=runner.clock(),
                                   error=f"skipped: step {failed_at} ({block.steps[failed_at].agent}) failed before it")
            continue
        skip, branch = (None, None) if dry_run else _branch(block, index, prior)
        if skip is not None:  # a conditional handoff not taken: journaled, so the person sees which branch ran
            if parent is not None:
                runner.runs.record(agent=agent.name, trigger=trigger, status="skipped", block=block.id, step=index,
                                   parent=parent, slot=slot, error=skip, details={"skipped": Skip.BRANCH},
                                   id_at=runner.clock())
            continue
        # The model manager's forecast: what this block still needs after the step starting now.
        runner.on_event(BlockStep(parent, block.id, index, tuple(s.agent for s in block.steps[index + 1:])))
        following = agents.get(block.steps[index + 1].agent) if index + 1 < len(block.steps) else None
        request = StepRequest(agent=agent, task=step.task or agent.task, write=_write_of(step, agent),
                              inputs=step.inputs, search=step.search, graph=step.graph, trigger=trigger, block=block.id,
                              step_index=index, parent=parent, slot=slot, prior=dict(prior), as_of=as_of,
                              prefetch=following.model if following else None,
                              variables={**dict(step.variables), **(variables or {})}, payload=payload,
                              details={**({"project": block.project} if block.project else {}),
                                       **({"branch": branch} if branch else {}),
                                       **({"answered_by": resume.answer.origin}
                                          if resume and resume.answer and index == resume.answer.step else {})},
                              answer=resume.answer if resume else None)
        result = run_with_retries(runner, block.retry, request, dry_run, stream)
        outcome.steps.append(result)
        if result.status is RunStatus.WAITING:  # it asked the person: the rest runs once answered
            outcome.status = RunStatus.WAITING
            break
        if result.error is not None:
            outcome.status = RunStatus.FAILED
            failed_at = index
            continue
        if step.advice and not dry_run and runner.journal is not None and result.run_id and result.output:
            queue_advice(runner.config, runner.journal.db, result.output, agents, agent.name, result.run_id,
                         runner.clock())
        # In a dry run no model answers; later steps see a placeholder so their prompts render.
        prior[agent.name] = result.output if not dry_run else f"(output of the {agent.name} step)"
        outcome.outputs[agent.name] = prior[agent.name]
    if parent is not None:
        failed = [s for s in outcome.steps if s.error is not None]
        wrote = [*(resume.wrote if resume else ()), *(s.wrote.rel for s in outcome.steps if s.wrote is not None)]
        asked = [s.question for s in outcome.steps if s.question]  # waits on the person: its question's id
        runner.runs.finish(parent, outcome.status, str(failed[0].error) if failed else None, wrote=wrote,
                           **({"details": {**(details or {}), "question": asked[-1]}}
                              if outcome.status is RunStatus.WAITING else {}))
    return outcome


def _last_run_followed(journal: Journal | None, block: Block) -> dict[str, str]:
    """A chained block fired by hand: what the latest run it follows gave (a dry run: placeholders)."""
    chain = block.after
    assert chain is not None
    if journal is None:
        return {chain.step: f"(output of the {chain.step} step of {chain.block})"} if chain.step else {}
    found = journal.outputs_of_last(chain.block)
    if found is None or (chain.step is not None and chain.step not in found):
        raise UsageError(f"Block {block.id} follows {chain.describe()}, which has no finished run to review yet.",
                         f"fire {chain.block} first (its run starts {block.id} by itself when the daemon runs it).")
    return found


def _branch(block: Block, index: int, prior: dict[str, str]) -> tuple[str | None, str | None]:
    """For a conditional step or an `else` step: (why it does not run, or None; why it runs)."""
    step = block.steps[index]
    if step.when is not None:
        cond = step.when
        output = prior.get(cond.step)
        if cond.holds(output):
            return None, f"{cond.describe()} ({cond.found(output)})"
        return f"skipped: the condition {cond.describe()} does not hold ({cond.found(output)})", None
    for earlier in block.steps[:index]:
        other = earlier.when
        if other is not None and other.otherwise == step.agent:
            output = prior.get(other.step)
            if other.holds(output):
                return f"skipped: the other branch ran ({earlier.agent}, as {other.describe()})", None
            return None, f"else of {earlier.agent}: {other.describe()} does not hold ({other.found(output)})"
    return None, None


def _begin(journal: Journal | None, block: Block, trigger: str, slot: str | None, run_id: str | None,
           resume: Resume | None, as_of: datetime) -> str | None:
    """The block run the steps join: the resumed one, a new one, or none (a dry run)."""
    if journal is None:
        return None
    if resume is not None:
        journal.update(resume.parent, status="running", error=None, ended_at=None)
        return resume.parent
    parent = journal.start(agent=None, trigger=trigger, kind="block", block=block.id, slot=slot,
                           run_id=run_id, at=as_of)
    if block.project:
        journal.update(parent, project=block.project)
    return parent


def run_with_retries(runner: Runner, policy: RetryPolicy, request: StepRequest, dry_run: bool,
                     stream: bool) -> StepOutcome:
    """One step, tried again after a transient failure while the policy allows; each attempt is
    its own step run (``details.attempt``), and only the last failure raises an alert."""
    attempt = 1
    while True:
        left = 0 if dry_run else policy.attempts - attempt
        attempt_request = replace(request, retries_left=left,
                                  details={**request.details, "attempt": attempt} if attempt > 1 else request.details)
        result = runner.run_step(attempt_request, dry_run=dry_run, stream=stream)
        if result.error is None or left <= 0 or not result.error.transient:
            return result
        attempt += 1
        wait = policy.wait_before(attempt)
        runner.on_event(Retrying(request.parent, request.agent.name, attempt, policy.attempts, wait, str(result.error)))
        if not runner.pause(wait):  # the daemon is stopping: the slot is run again at the next start
            return result


def _write_of(step: StepSpec, agent: AgentSpec) -> WriteSpec:
    """The step's write target, else the agent's (the schedule loader requires one of them)."""
    write = step.write or agent.write
    if write is None:
        raise UsageError(f"The step of {agent.name} has no `write:` target, and the agent has no default.",
                         f"add `write:` to the step, or to {agent.source}.")
    return write
