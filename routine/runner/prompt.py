"""Rendering the exact messages a step sends, from the templates in ``routine/prompts``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from routine.config.model import AgentSpec, ModelAlias
from routine.models.tokens import Counter, Message, count_request
from routine.prompts import template
from routine.runner.budget import Fitted, fit
from routine.runner.context import Gathered
from routine.templating import Variables, fill, render

if TYPE_CHECKING:
    from routine.tools.base import Tool
    from routine.vault.context_items import Dropped


@dataclass
class Prompt:
    messages: list[Message]
    sources: list[str]
    dropped: list[Dropped]
    missing: list[str]
    tools: list[str] = field(default_factory=list)
    counted: int = 0  # prompt tokens as counted before sending (messages and tool schemas)
    limit: int = 0    # the most the window allows beside the answer's reserve
    reserved: int = 0  # of that, left free for the tool loop's first call and result (the agent's tool_reserve)
    fixed: int = 0     # of ``counted``, what is never cut: system prompt, task, instructions, tool schemas


def build(agent: AgentSpec, alias: ModelAlias, task: str, gathered: Gathered, variables: Variables,
          instructions: str, counter: Counter, person: str = "the person", tools: list[Tool] | None = None) -> Prompt:
    """The messages of a step, fitted so that the whole request (tool schemas included) counts
    at most ``num_ctx - num_predict`` tokens by ``counter``. ``tools``: the step's tool set (its
    MCP servers' tools included; ``routine.tools.toolset``), else the agent's own tools."""
    from routine.tools.registry import tools_for  # lazy: jsonschema, which the tools' declarations load

    tools = tools_for(agent) if tools is None else tools
    agent_prompt = fill(agent.system_prompt, {**variables, "agent": agent.name})  # data: no template runs
    system = render(template("system.md.j2"),
                    {**variables, "agent_prompt": agent_prompt, "agent": agent.name, "person": person},
                    "system.md.j2").strip()
    base = {**variables, "task": task, "output_instructions": instructions, "missing": gathered.missing,
            "tools": [t.name for t in tools], "can_read": "read_note" in agent.tools}
    specs = [t.spec() for t in tools] or None
    limit = alias.num_ctx - alias.num_predict

    def messages_with(fitted: Fitted) -> list[Message]:
        user = render(template("step.md.j2"), {**base, "items": fitted.kept, "dropped": fitted.dropped}, "step.md.j2")
        return [{"role": "system", "content": system}, {"role": "user", "content": user.strip()}]

    fixed = never_cut = count_request(counter, messages_with(Fitted([])), specs)
    # A step with tools leaves room for its first call and result, as far as the fixed part allows.
    reserved = min(agent.tool_reserve, max(0, limit - fixed)) if specs else 0
    plan = limit - reserved
    fitted = fit(gathered.items, fixed, plan, counter)
    messages = messages_with(fitted)
    counted = count_request(counter, messages, specs)
    while counted > plan:  # the list of what was left out costs tokens too: fit again, tighter
        fixed += counted - plan + 16
        fitted = fit(gathered.items, fixed, plan, counter)
        messages = messages_with(fitted)
        counted = count_request(counter, messages, specs)
    return Prompt(messages=messages, sources=[k.source for k in fitted.kept if k.source], dropped=fitted.dropped,
                  missing=gathered.missing, tools=list(agent.tools), counted=counted, limit=limit, reserved=reserved,
                  fixed=never_cut)
