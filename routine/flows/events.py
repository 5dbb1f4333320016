"""An outside event's trigger run (`routine trigger NAME`): its agent with the trigger's task and
write target, or its block, with the payload as data (``schedule.events``), journaled as
``trigger: event:<name>``. The daemon's control socket (``daemon/event_op.py``) and `routine
trigger` without a daemon both run it through here."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from routine.config.model import AgentSpec
from routine.errors import UsageError
from routine.journal.runs import RunDetails
from routine.runner.block import run_block
from routine.runner.request import StepRequest
from routine.runner.step import Runner
from routine.schedule.events import Payload
from routine.schedule.model import Block, Trigger


def source(trigger: Trigger) -> str:
    """The journal's `trigger` of its runs."""
    return f"event:{trigger.event}"


def run_event(runner: Runner, trigger: Trigger, agents: Mapping[str, AgentSpec], blocks: Mapping[str, Block],
              payload: Payload, held: datetime | None = None) -> dict[str, object]:
    """Run ``trigger``'s agent or block; its summary (as `routine fire` prints one). ``held``: a run
    a pause held since then, fired at its end (journaled ``held``)."""
    variables: dict[str, object] = {"event": trigger.event or ""}
    since = RunDetails(held=held.isoformat()) if held else RunDetails()
    if trigger.block is not None:
        block = blocks.get(trigger.block)
        if block is None:
            raise UsageError(f"Trigger {trigger.id} runs block {trigger.block}, which is no longer in the schedules.",
                             f"restore it, or change the trigger in {trigger.file}.")
        outcome = run_block(runner, block, dict(agents), trigger=source(trigger), payload=payload.text,
                            variables=variables, details=since)
        return {"trigger": trigger.id, "block": block.id, "run": outcome.run_id, "status": outcome.status,
                "steps": [s.summary() for s in outcome.steps]}
    agent = agents.get(trigger.agent)
    write = trigger.write or (agent.write if agent else None)
    if agent is None or write is None:
        raise UsageError(f"Trigger {trigger.id} runs agent {trigger.agent}, which is not loaded or has nowhere "
                         "to write.", f"check the agent note, or the trigger in {trigger.file}.")
    request = StepRequest(agent=agent, task=trigger.task or agent.task, write=write, inputs=agent.inputs,
                          trigger=source(trigger), variables=variables, payload=payload.text,
                          details=RunDetails(trigger=trigger.id, event=source(trigger)) | since)
    return {"trigger": trigger.id, "agent": agent.name, **runner.run_step(request).summary()}
