"""One run on another model alias (`routine fire --model`, `ask`/`chat --model`): the agent as it
would run on that alias, checked against the aliases routine.yaml defines."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from routine.config.model import AgentSpec, Config
from routine.errors import UsageError


def known_alias(config: Config, alias: str) -> str:
    """``alias`` when routine.yaml defines it; else one sentence naming the defined ones."""
    if alias not in config.models:
        raise UsageError(f"Model alias {alias!r} is not defined in {config.path.name} "
                         f"(defined: {', '.join(config.models)}).",
                         f"pass one of them to --model, or add `{alias}` under `models:` in {config.path}.")
    return alias


def on_model(config: Config, agent: AgentSpec, alias: str | None, write: bool = False) -> AgentSpec:
    """``agent`` answering on ``alias`` (None: as it is). A run on another alias is a try: its
    writes become proposals (the agent's approval required) unless ``write``."""
    if alias is None:
        return agent
    known_alias(config, alias)
    if write or agent.approval == "required":
        return replace(agent, model=alias)
    why = (f"{agent.name} ran on {alias} (--model) without --write, so its note is a proposal "
           "(add --write to write it)")
    return replace(agent, model=alias, approval="required", approval_why=why)


def on_models(config: Config, agents: dict[str, AgentSpec], names: Iterable[str], alias: str | None,
              write: bool = False) -> dict[str, AgentSpec]:
    """``agents`` with those ``names`` (a block's) on ``alias`` (``on_model``)."""
    if alias is None:
        return agents
    chosen = set(names)
    return {name: on_model(config, agent, alias, write) if name in chosen else agent for name, agent in agents.items()}
