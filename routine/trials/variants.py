"""A prompt trial: an agent's real runs replayed with a variant of its note's body (its
instructions), on the agent's own model, and judged beside the answers the current note gave —
the reply checks, the grounding check, and closeness to what the person kept. Nothing is written
but the trial's record (table ``prompt_trials``) and, when the variant did better, a proposal to
the agent note that carries its figures: approving it changes the note as any proposal does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from statistics import mean
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from routine.access import scoped
from routine.config.loader import parse_agent_note, read_agent_note
from routine.config.model import AgentSpec, Config
from routine.config.yamlfile import YamlSyntaxError
from routine.errors import ConfigError, UsageError
from routine.journal import RunRecord
from routine.templating import date_vars, fill
from routine.trials.replay import Judged, replay_messages
from routine.vault.frontmatter import parse_frontmatter

if TYPE_CHECKING:
    from routine.models.client import ModelClient
    from routine.models.tokens import Message

FOOTER = "\n\n---\nYou are the "  # where routine's own lines follow the agent's (prompts/system.md.j2)
CLOSER = 0.02  # closeness to the kept text: a difference under this is no difference


def load_variant(config: Config, agent: AgentSpec, rel: str) -> AgentSpec:
    """The variant: a copy of the agent's note anywhere in the vault (its body is what is tried),
    read as the agent note it would become; its problems are located in the copy."""
    try:
        return _as_note(config, agent, read_agent_note(config.vault, rel), rel)
    except YamlSyntaxError as exc:
        raise ConfigError([replace(exc.problem, file=rel)]) from None


def variant_of_body(config: Config, agent: AgentSpec, body: str, origin: str) -> AgentSpec:
    """The agent note as it would become with ``body`` as its instructions (its properties kept),
    read as any agent note is; its problems are said as ``origin``'s."""
    try:
        note = parse_frontmatter(read_agent_note(config.vault, agent.source))
        return _as_note(config, agent, f"{note.block}\n{body.strip()}\n", origin)
    except YamlSyntaxError as exc:
        raise ConfigError([replace(exc.problem, file=origin)]) from None


def _as_note(config: Config, agent: AgentSpec, text: str, rel: str) -> AgentSpec:
    spec, problems = parse_agent_note(text, agent.source, config)
    if problems:
        raise ConfigError([replace(p, file=rel) for p in problems])
    if spec is None:
        raise UsageError(f"{rel} is not an agent note (it needs `agent:` in its properties).",
                         f"copy {agent.source} and change its body.")
    return spec


@dataclass(frozen=True)
class Tried:
    run: str
    current: Judged  # the answer the agent note gave in the real run
    variant: Judged  # the variant's answer to the same request


@dataclass(frozen=True)
class Verdict:
    tried: tuple[Tried, ...]

    def passed(self, which: str) -> int:
        return sum(1 for t in self.tried if getattr(t, which).passed)

    def closeness(self, which: str) -> float | None:
        found = [getattr(t, which).closeness for t in self.tried if getattr(t, which).closeness is not None]
        return round(mean(found), 3) if found else None

    @property
    def better(self) -> bool:
        """Passes at least as often, is no further from what the person kept, and gains on one."""
        now, new = self.closeness("current"), self.closeness("variant")
        closer = new is not None and now is not None and new - now >= CLOSER
        further = new is not None and now is not None and now - new >= CLOSER
        passes = self.passed("variant") - self.passed("current")
        return bool(self.tried) and passes >= 0 and not further and (passes > 0 or closer)

    def grounded(self, which: str) -> int:
        return sum(1 for t in self.tried if getattr(t, which).grounding_ok is not False)

    def figures(self) -> str:
        n = len(self.tried)
        line = f"checks passed {self.passed('current')}/{n} now, {self.passed('variant')}/{n} with the variant"
        now, new = self.closeness("current"), self.closeness("variant")
        if now is not None and new is not None:
            line += f"; closeness to what you kept {now:.2f} now, {new:.2f} with the variant"
        return line + f"; grounding held {self.grounded('current')}/{n} now, {self.grounded('variant')}/{n} with it"


def variant_messages(messages: list[Message], variant: AgentSpec, when: datetime, agent: str,
                     zone: str) -> list[Message]:
    """``messages`` with the agent's part of the system message replaced by ``variant``'s body,
    its placeholders filled as the run's were (the run's day, the agent's name)."""
    first = messages[0] if messages else {}
    content = str(first.get("content") or "")
    if first.get("role") != "system" or FOOTER not in content:
        raise UsageError("This run's request has no system message in the form routine writes.",
                         "try a run made by this version of routine.")
    footer = content[content.rindex(FOOTER):]
    values = {**date_vars(when.astimezone(ZoneInfo(zone))), "agent": agent}
    return [{**first, "content": fill(variant.system_prompt, values).strip() + footer}, *messages[1:]]


def try_variant(config: Config, agent: AgentSpec, variant: AgentSpec, runs: list[RunRecord],
                client: ModelClient) -> Verdict:
    """Each of ``runs`` (the agent's own) asked again with the variant, on the agent's model."""
    agent = scoped(config, agent)
    tried = []
    for run in runs:
        if not isinstance(run.prompt, list) or not run.prompt:
            continue
        messages = variant_messages(run.prompt, variant, datetime.fromisoformat(run.started_at), agent.name,
                                    config.zone_name())
        replayed = replay_messages(config, agent, run, messages, agent.model, client)
        tried.append(Tried(run.id, replayed.original, replayed.candidate))
    return Verdict(tuple(tried))
