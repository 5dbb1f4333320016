"""Tools of a project's manager: recommend a cognitive artifact, propose tasks. Both only ever
write proposals (the person decides), whatever the agent's `approval:` says."""

from __future__ import annotations

from routine.errors import RoutineError
from routine.jsonvalue import Parsed
from routine.projects.recommend import propose_tasks as propose
from routine.projects.recommend import recommend_artifact as recommend
from routine.tools.base import ToolContext, ToolError, tool
from routine.vault import Provenance


@tool(
    "recommend_artifact",
    "Recommend a thinking tool from the artifact library (e.g. 'Pre-mortem', 'Interview guide', "
    "'Decision record') for your project; the person approves it and it is added to the case file.",
    {
        "template": {"type": "string", "description": "the template's name in Templates/Artifacts, e.g. 'Pre-mortem'"},
        "reason": {"type": "string", "description": "one sentence: why it helps now"},
    },
    required=["template", "reason"],
)
def recommend_artifact(ctx: ToolContext, template: str, reason: str) -> str:
    config, agent = ctx.config, ctx.agent
    model = config.models[agent.model].model
    try:
        with ctx.write_gate():
            rel = recommend(ctx.vault, agent, model, ctx.run_id or "", ctx.now,
                            config.layout.drafts, template, reason)
    except RoutineError as exc:
        raise ToolError(f"{exc.message} {exc.fix or ''}".strip()) from None
    return f"Recommended {template}; the proposal is {rel} (the person approves it)."


@tool("propose_tasks", "Propose tasks for your project, each with an assignee (a member's note name) and an optional "
      "due date; the person approves them before they join the task list.",
      {"tasks": {"type": "array", "description": "the tasks, e.g. [{\"text\": \"Draft the FAQ\", \"assignee\": "
                 "\"Builder\", \"due\": \"2026-12-01\"}]",
                 "items": {"type": "object", "properties": {"text": {"type": "string"}, "assignee": {"type": "string"},
                                                            "due": {"type": "string"}}, "required": ["text"]}}},
      required=["tasks"])
def propose_tasks(ctx: ToolContext, tasks: list[Parsed]) -> str:
    config, agent = ctx.config, ctx.agent
    prov = Provenance(agent=agent.name, model=config.models[agent.model].model,
                      run=ctx.run_id or "", generated=ctx.now)
    try:
        with ctx.write_gate():
            rel = propose(ctx.vault, agent, prov, config.layout.drafts, tasks)
    except RoutineError as exc:
        raise ToolError(f"{exc.message} {exc.fix or ''}".strip()) from None
    return f"Proposed {len(tasks)} task(s) in {rel}; the person approves them."
