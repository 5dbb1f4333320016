"""Rendering the exact messages a step sends, from the templates in ``routine/prompts``."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from routine.config.model import AgentSpec, ModelAlias
from routine.runner.budget import fit
from routine.runner.context import Gathered
from routine.templating import render

OUTPUT_FOR = {
    "section": ("Write only the markdown that goes inside the section \"{section}\" of {note}: "
                "no heading for the section itself, no preamble, no sign-off. "
                "Cite the notes you draw on with wikilinks such as [[Plans/OKRs]]."),
    "note": ("Write the body of the new note {note} in markdown: no preamble, no sign-off. "
             "Cite the notes you draw on with wikilinks such as [[Plans/OKRs]]."),
    "append": ("Write a short markdown entry to append to {note}: no preamble. "
               "Cite the notes you draw on with wikilinks."),
}


@lru_cache(maxsize=None)
def _template(name: str) -> str:
    return resources.files("routine.prompts").joinpath(name).read_text(encoding="utf-8")


@dataclass
class Prompt:
    messages: list[dict]
    sources: list[str]
    dropped: list[dict]
    missing: list[str]
    tools: list[str] = field(default_factory=list)


def output_instructions(kind: str, note: str, section: str | None) -> str:
    return OUTPUT_FOR[kind].format(note=note, section=section)


def build(agent: AgentSpec, alias: ModelAlias, task: str, gathered: Gathered, variables: dict,
          instructions: str, person: str = "the person") -> Prompt:
    agent_prompt = render(agent.system_prompt, {**variables, "agent": agent.name}, f"the prompt of {agent.source}")
    system = render(_template("system.md.j2"),
                    {**variables, "agent_prompt": agent_prompt, "agent": agent.name, "person": person},
                    "system.md.j2").strip()
    base = {**variables, "task": task, "output_instructions": instructions, "missing": gathered.missing,
            "tools": list(agent.tools)}
    fixed = system + render(_template("step.md.j2"), {**base, "items": [], "dropped": []}, "step.md.j2")
    fitted = fit(gathered.items, fixed, alias.num_ctx, alias.num_predict)
    user = render(_template("step.md.j2"), {**base, "items": fitted.kept, "dropped": fitted.dropped}, "step.md.j2")
    sources = [it.source for it in fitted.kept if it.source]
    return Prompt(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user.strip()}],
        sources=sources,
        dropped=fitted.dropped,
        missing=gathered.missing,
        tools=list(agent.tools),
    )
