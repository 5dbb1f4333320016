"""What a step is asked to do (``StepRequest``) and what came of it (``StepOutcome``): the values
that cross from whoever starts a run (fire, a block, a trigger, a task pickup, QA) into
``runner.step.Runner.run_step`` and back."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Protocol

from routine.causes import Cause
from routine.config.model import AgentSpec, Config, GraphSpec, SearchSpec, WriteSpec
from routine.errors import RoutineError, UsageError
from routine.journal.runs import RunDetails
from routine.journal.status import RunStatus
from routine.person.asks import Answered

if TYPE_CHECKING:
    from routine.jsonvalue import JSONObject
    from routine.models.client import Completion
    from routine.runner.prompt import Prompt
    from routine.vault import WriteResult


@dataclass
class StepRequest:
    agent: AgentSpec
    task: str  # a template
    write: WriteSpec
    inputs: tuple[str, ...] = ()
    search: SearchSpec | None = None  # notes found by meaning, within the agent's reads scopes
    graph: GraphSpec | None = None    # typed links around a note (issue 15), within the agent's reads scopes
    trigger: str = "manual"
    block: str | None = None
    step_index: int | None = None
    parent: str | None = None
    slot: str | None = None
    prior: dict[str, str] = field(default_factory=dict)  # earlier steps' outputs, by agent name
    prefetch: str | None = None  # the model alias the block's next step needs (preloaded meanwhile)
    variables: dict[str, object] = field(default_factory=dict)  # more template variables (a trigger's path, event)
    details: RunDetails = field(default_factory=lambda: RunDetails())  # journaled with the run (a trigger's id…)
    retries_left: int = 0  # a transient failure will be tried again: no alert for this attempt
    as_of: datetime | None = None  # the dates its templates render (a block's start, kept by a retry); else now
    review: tuple[str, str] | None = None  # a QA review: (artifact, review note), the only note it writes
    # Its failures share one alert of this cause (a task's pickup), unless theirs has one.
    alert_cause: Cause | None = None
    # A block resumed after the person answered a step's question: `{{ answer }}` and a piece of context.
    answer: Answered | None = None
    payload: str = ""  # an outside event's payload (JSON text): a piece of context, and `{{ payload }}`, as data

    @classmethod
    def for_agent(cls, config: Config, agent: AgentSpec, task: str | None, trigger: str = "manual",
                  model_override: str | None = None) -> "StepRequest":
        """A one-off run of an agent (`routine fire AGENT`): its default task and write target.
        ``model_override``: the alias it runs on instead of its own (`--model`), journaled in its details."""
        task = task or agent.task
        if not task:
            raise UsageError(f"Agent {agent.name} has no default task.",
                             f"pass --task TEXT, or add `task:` to {agent.source}.")
        write = agent.write or WriteSpec(note=f"{config.layout.daily}/{{{{ today }}}}.md", section=agent.name.title())
        details = RunDetails(model_alias=model_override) if model_override else RunDetails()
        return cls(agent=agent, task=task, write=write, inputs=agent.inputs, trigger=trigger, details=details)


class StepSetup(Protocol):
    """What a step is given before the runner takes it, by the code that runs it
    (``Runner(setup=...)``; ``routine.flows.step_setup.STEP_SETUP``), from the layers the runner does
    not import: the agent's scopes of now (``routine.access``) and a project's facts and the daily
    Plans (``routine.projects``)."""

    def prepare(self, config: Config, req: StepRequest, now: datetime) -> tuple[StepRequest, str | None]:
        """(the request with the agent's effective scopes and its project's variables, the project's name)."""
        ...

    def follow_through(self, config: Config, today: date, days: int) -> str:
        """Planned vs done in the daily Plans of the ``days`` days up to ``today`` (`follow-through: 7d`)."""
        ...


@dataclass
class StepOutcome:
    run_id: str | None
    status: RunStatus
    prompt: Prompt | None = None
    output: str = ""
    wrote: WriteResult | None = None
    error: RoutineError | None = None
    alert: str | None = None
    model: str | None = None
    completion: Completion | None = None  # when a model answered
    agent: AgentSpec | None = None  # a dry run: the agent as it would run (its effective scopes)
    question: str | None = None  # the step asked the person (its question's id): the block waits

    def summary(self) -> JSONObject:
        """What the CLI prints for --json and the control socket sends back."""
        wrote = self.wrote
        return {
            "run": self.run_id, "status": self.status, "model": self.model,
            "wrote": None if wrote is None else {"path": wrote.rel, "outcome": wrote.outcome,
                                                "proposal": wrote.proposal_rel, "message": wrote.message},
            "error": None if self.error is None else str(self.error), "alert": self.alert,
            **({"question": self.question} if self.question else {}),
        }
