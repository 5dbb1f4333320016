"""An agent's effective scopes, widened and narrowed in this one place.

- A custom agent (``custom: true``) is a small sandbox: it reads its grounding, and reads and
  writes its own folder (``Agents/<Name>/``) and the case files it is assigned to.
- Any agent assigned to a project or task (``routine.projects.membership``) may read and write
  that case file: ``with_assignments``, applied by the runner at the start of every step (and by
  `agent show`), so an assignment made in Obsidian counts at the next run.
- The grounding of a locked agent (``locked: true``) is taken out of every *other* agent's
  scopes with a ``!`` glob, so their read_note, list_notes, search_notes, inputs and search
  hits never reach it; the locked agent itself keeps it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path, PurePosixPath

from routine.config.model import AgentSpec, Config

EXCLUDE = "!"  # a scope glob starting with '!' takes paths out (routine.vault.scope.in_scope)


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
    from routine.projects.assignees import glob_literal

    return glob_literal(rel)


def effective_scopes(agents: dict[str, AgentSpec], config: Config) -> dict[str, AgentSpec]:
    """Grounding and locks, at every agent load. Assignments are added where a run starts
    (``with_assignments``, from the runner), which reads the vault's task lines: listing
    commands stay quick on a large vault."""
    vault = config.vault
    locked = {name: [_literal(rel) for rel in grounding_paths(vault, spec)]
              for name, spec in agents.items() if spec.locked}
    return {name: _sandboxed(vault, name, spec, locked) for name, spec in agents.items()}


def _sandboxed(vault: Path, name: str, spec: AgentSpec, locked: dict[str, list[str]]) -> AgentSpec:
    reads = list(spec.reads)
    if spec.custom:
        reads += [_literal(rel) for rel in grounding_paths(vault, spec)]
    hidden = [EXCLUDE + rel for other, rels in locked.items() if other != name for rel in rels]
    return replace(spec, reads=tuple(dict.fromkeys(reads + hidden)), writes=tuple(dict.fromkeys([*spec.writes, *hidden])))


def with_assignments(agent: AgentSpec, vault: Path) -> AgentSpec:
    """The agent with the case files it is assigned to *now* (a person may assign in Obsidian
    between the agent's load and its run: the runner calls this at every step)."""
    from routine.projects.membership import case_file_globs

    assigned = tuple(g for g in case_file_globs(vault, agent.name) if g not in agent.reads or g in agent.assigned)
    if assigned == agent.assigned:
        return agent

    def widened(globs: tuple[str, ...]) -> tuple[str, ...]:
        base = [g for g in globs if g not in agent.assigned]
        # exclusions are kept (in_scope honours them wherever they stand); listed last for reading
        return tuple(dict.fromkeys([g for g in base if not g.startswith(EXCLUDE)] + list(assigned)
                                   + [g for g in base if g.startswith(EXCLUDE)]))

    return replace(agent, reads=widened(agent.reads), writes=widened(agent.writes), assigned=assigned)
