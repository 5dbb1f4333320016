"""A schedule block: its steps in order, each seeing the earlier outputs.

A failed step stops the block; the steps after it are journaled as skipped, with the reason,
so every step of every slot is explained in the journal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from routine.config.model import AgentSpec
from routine.journal import new_run_id
from routine.runner.step import Runner, StepOutcome, StepRequest
from routine.schedule.model import Block


@dataclass
class BlockOutcome:
    run_id: str | None
    status: str  # ok | failed | dry-run
    steps: list[StepOutcome] = field(default_factory=list)


def run_block(runner: Runner, block: Block, agents: dict[str, AgentSpec], trigger: str = "manual",
              slot: str | None = None, dry_run: bool = False, stream: bool = False,
              run_id: str | None = None) -> BlockOutcome:
    journal = runner.journal
    parent = None
    if not dry_run:
        parent = journal.start(agent=None, trigger=trigger, kind="block", block=block.id, slot=slot,
                               run_id=run_id or new_run_id(runner.clock()))
    runner.on_event("block", {"run": parent, "block": block.id, "steps": len(block.steps)})
    outcome = BlockOutcome(parent, "dry-run" if dry_run else "ok")
    prior: dict[str, str] = {}
    for index, step in enumerate(block.steps):
        agent = agents[step.agent]
        if outcome.status == "failed":
            journal.record(agent=agent.name, trigger=trigger, status="skipped", block=block.id, step=index,
                           parent=parent, slot=slot,
                           error=f"skipped: step {failed_at} ({block.steps[failed_at].agent}) failed before it")
            continue
        # The model manager's forecast: what this block still needs after the step starting now.
        runner.on_event("step", {"run": parent, "block": block.id, "index": index,
                                 "after": [s.agent for s in block.steps[index + 1:]]})
        following = agents.get(block.steps[index + 1].agent) if index + 1 < len(block.steps) else None
        request = StepRequest(agent=agent, task=step.task or agent.task, write=step.write or agent.write,
                              inputs=step.inputs, search=step.search, graph=step.graph, trigger=trigger, block=block.id,
                              step_index=index, parent=parent, slot=slot, prior=dict(prior),
                              prefetch=following.model if following else None)
        result = runner.run_step(request, dry_run=dry_run, stream=stream)
        outcome.steps.append(result)
        if result.error is not None:
            outcome.status = "failed"
            failed_at = index
            continue
        # In a dry run no model answers; later steps see a placeholder so their prompts render.
        prior[agent.name] = result.output if not dry_run else f"(output of the {agent.name} step)"
    if parent is not None:
        failed = [s for s in outcome.steps if s.error is not None]
        journal.finish(parent, outcome.status, str(failed[0].error) if failed else None,
                       wrote=[s.wrote.rel for s in outcome.steps if s.wrote is not None])
    return outcome
