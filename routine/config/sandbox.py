"""An agent's effective scopes, widened and narrowed in this one place.

- A custom agent (``custom: true``) is a small sandbox: it reads its grounding, and reads and
  writes its own folder (``Agents/<Name>/``) and the case files it is assigned to.
- Any agent assigned to a project or task (``routine.projects.membership``) may read and write
  that case file.
- The grounding of a locked agent (``locked: true``) is taken out of every *other* agent's
  scopes with a ``!`` glob, so their read_note, list_notes, search_notes, inputs and search
  hits never reach it; the locked agent itself keeps it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path, PurePosixPath

from routine.config.model import AgentSpec, Config
from routine.vault.scope import EXCLUDE


def desk_of(agent: AgentSpec) -> str:
    """A custom agent's own folder, beside its note: Agents/Pricer.md -> 'Agents/Pricer'."""
    return PurePosixPath(agent.source).with_suffix("").as_posix()


def custom_scopes(agent: AgentSpec) -> AgentSpec:
    """A custom agent's static sandbox: its own folder, readable and writable (at parse time,
    so its `write:` target there passes the scope check)."""
    if not agent.custom:
        return agent
    desk = desk_of(agent) + "/**"
    return replace(agent, reads=tuple(dict.fromkeys((*agent.reads, desk))),
                   writes=tuple(dict.fromkeys((*agent.writes, desk))))


def grounding_paths(vault: Path, agent: AgentSpec) -> list[str]:
    from routine.vault.notes import resolve_wikilink

    found = []
    for link in agent.grounding:
        rel = resolve_wikilink(vault, link)
        if rel is not None:
            found.append(rel)
    return found


def _literal(rel: str) -> str:
    from routine.projects.membership import _glob_literal

    return _glob_literal(rel)


def effective_scopes(agents: dict[str, AgentSpec], config: Config) -> dict[str, AgentSpec]:
    from routine.projects.membership import case_file_globs

    vault = config.vault
    locked = {name: [_literal(rel) for rel in grounding_paths(vault, spec)]
              for name, spec in agents.items() if spec.locked}
    out = {}
    for name, spec in agents.items():
        assigned = case_file_globs(vault, name)
        reads, writes = list(spec.reads), list(spec.writes)
        if spec.custom:
            reads += [_literal(rel) for rel in grounding_paths(vault, spec)]
        reads += assigned
        writes += assigned
        hidden = [EXCLUDE + rel for other, rels in locked.items() if other != name for rel in rels]
        out[name] = replace(spec, reads=tuple(dict.fromkeys(reads + hidden)),
                            writes=tuple(dict.fromkeys(writes + hidden)))
    return out
