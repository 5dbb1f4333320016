"""An agent's effective access: the one resolver every entry point calls (a run from `fire`, a
block, a trigger or a task pickup; chat and `ask`; approval; `agent show`; search and graph
`--agent`). Nothing else computes scopes.

From the agent note's own `reads:`/`writes:` (a custom agent's own folder counts as declared):

- a custom agent (``custom: true``) also reads its grounding;
- its assignments (``routine.projects.assignees``, the one definition of "assigned"): the case
  file of every active project it manages or is a member of — readable, writable by the manager
  and autonomous/reactive/scheduled members, and **only as proposals** for a semi-autonomous
  member, on every path; the note of a task assigned to it and the task's result note;
- artifacts with an owner: writable only by the owner or the agent assigned to them (every other
  agent gets a ``!path`` out of its writes); readable by those they are shared with;
- a locked agent's grounding is hidden (``!path`` out of reads and writes) from every other agent.

Project folders, task notes and grounding paths are literal in globs (``*?[`` bracketed), so a
folder named ``*`` grants nothing beyond itself. The ``!`` globs are honoured wherever they stand
(``routine.vault.scope.in_scope``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path

from routine.access.locks import locked_grounding
from routine.config.behaviours import Behaviour
from routine.config.model import AgentSpec, Config
from routine.config.tool_names import REVIEW_TOOLS
from routine.jsonvalue import JSONObject
from routine.projects.artifacts import artifacts_in
from routine.projects.assignees import Assignments, agent_aliases, assignments_of
from routine.vault.notes import resolve_wikilink
from routine.vault.scope import glob_literal, in_scope

EXCLUDE = "!"  # a scope glob starting with '!' takes paths out


class WriteMode(str, Enum):
    DIRECT = "direct"      # written in place (unless the agent's approval is required)
    PROPOSAL = "proposal"  # written only as a proposal the person approves
    NONE = "none"


@dataclass(frozen=True)
class Access:
    agent: str
    reads: tuple[str, ...]            # globs it may read
    writes: tuple[str, ...]           # globs it may write in place
    proposal_writes: tuple[str, ...]  # globs it may write only as proposals
    hidden: tuple[str, ...]           # '!' globs out of reads and writes: locked agents' grounding
    denied: tuple[str, ...]           # '!' globs out of writes: artifacts it neither owns nor was assigned
    tools: tuple[str, ...]
    approval: str                     # "required": every write is a proposal
    projects: tuple[str, ...] = ()    # the projects it is assigned to (manager or member)
    tasks: tuple[str, ...] = ()       # notes holding tasks assigned to it (outside its projects)

    @property
    def read_globs(self) -> list[str]:
        return [*self.reads, *self.hidden]

    @property
    def write_globs(self) -> list[str]:
        return [*self.writes, *self.hidden, *self.denied]

    @property
    def proposal_globs(self) -> list[str]:
        return [*self.proposal_writes, *self.hidden, *self.denied] if self.proposal_writes else []

    def may_read(self, rel: str) -> bool:
        return in_scope(self.read_globs, rel)

    def write_mode(self, rel: str) -> WriteMode:
        if self.proposal_writes and in_scope(self.proposal_globs, rel):
            return WriteMode.PROPOSAL
        if in_scope(self.write_globs, rel):
            return WriteMode.PROPOSAL if self.approval == "required" else WriteMode.DIRECT
        return WriteMode.NONE

    def applied(self, agent: AgentSpec) -> AgentSpec:
        """The agent spec a run uses: its scopes are these (exclusions included)."""
        return replace(agent, reads=tuple(self.read_globs), writes=tuple(self.write_globs),
                       proposal_writes=tuple(self.proposal_globs), tools=self.tools, approval=self.approval,
                       resolved=True)

    def as_dict(self) -> JSONObject:
        return {"reads": list(self.reads), "writes": list(self.writes), "proposal_writes": list(self.proposal_writes),
                "hidden": list(self.hidden), "denied": list(self.denied), "tools": list(self.tools),
                "approval": self.approval, "projects": list(self.projects), "tasks": list(self.tasks)}


def _unique(*groups: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(g for group in groups for g in group))


def resolve(
    config: Config, agent: AgentSpec, *, approving: bool = False, review: tuple[str, str] | None = None
) -> Access:
    """What ``agent`` may do now (assignments made in Obsidian count at once).

    ``approving``: the person approves a proposal the agent wrote, so its proposal-only globs
    are writable. ``review``: (artifact, review note) of a QA review run: it reads the artifact besides
    its own reads, writes only its review, and has only ``REVIEW_TOOLS`` (read_note)."""
    vault = Path(config.vault)
    found = assignments_of(vault, agent.name, agent.source)
    grants = _grants(found)
    reads = [*agent.reads, *grants.reads]
    if agent.custom:
        reads += [glob_literal(rel) for rel in _grounding(vault, agent.grounding)]
    hidden = [EXCLUDE + glob_literal(rel) for note, links in locked_grounding(vault, config.layout.agents)
              if note != agent.source for rel in _grounding(vault, links)]
    denied, shared = _ownership(vault, found, agent)
    writes, proposal = [*agent.writes, *grants.writes], list(grants.proposal)
    tools, approval = agent.tools, agent.approval
    if approving:  # and a prompt trial's proposal to its own note (the person approves it: `agent try`)
        writes, proposal = writes + proposal + [glob_literal(agent.source)], []
    if review is not None:
        reads, writes, proposal = [*reads, glob_literal(review[0])], [glob_literal(review[1])], []
        tools, approval = REVIEW_TOOLS, "none"
    return Access(agent=agent.name, reads=_unique(reads, shared), writes=_unique(writes),
                  proposal_writes=_unique(proposal), hidden=_unique(hidden), denied=_unique(denied),
                  tools=tuple(tools), approval=approval, projects=found.projects,
                  tasks=_unique(task.file for _, task in found.tasks))


def scoped(
    config: Config, agent: AgentSpec, *, approving: bool = False, review: tuple[str, str] | None = None
) -> AgentSpec:
    """The agent spec with its effective scopes (``resolve``), for the code that runs it. An
    already resolved spec is returned as it is."""
    if agent.resolved:
        return agent
    return resolve(config, agent, approving=approving, review=review).applied(agent)


def reader(config: Config, agent: AgentSpec) -> Callable[[str], bool]:
    """Whether ``agent`` may read a vault path (``Access.may_read`` of its effective scopes): what the
    grounding check looks a claim up in."""
    return scoped(config, agent).may_read


@dataclass(frozen=True)
class _Grants:
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    proposal: tuple[str, ...]


def _grants(found: Assignments) -> _Grants:
    reads: list[str] = []
    writes: list[str] = []
    proposal: list[str] = []
    for member in found.memberships:
        glob = member.project.case_file_glob
        reads.append(glob)
        writes_as_proposals = isinstance(member.role, Behaviour) and member.role.writes_as_proposals
        (proposal if writes_as_proposals else writes).append(glob)
    for project, task in found.tasks:
        notes = [task.file] + ([project.note_rel(task.result)] if task.result else [])
        reads += [glob_literal(rel) for rel in notes]
        writes += [glob_literal(rel) for rel in notes]
    return _Grants(tuple(reads), tuple(writes), tuple(proposal))


def _grounding(vault: Path, links: Iterable[str]) -> list[str]:
    return [rel for rel in (resolve_wikilink(vault, link) for link in links) if rel is not None]


def _ownership(vault: Path, found: Assignments, agent: AgentSpec) -> tuple[list[str], list[str]]:
    """(``!`` globs of artifacts it may not write, artifacts shared with it)."""
    names = agent_aliases(vault, agent.name, agent.source)
    denied, shared = [], []
    for artifact in artifacts_in(vault, ""):  # wherever it lives: an owned note in Inbox/ is owned too
        if artifact.owner is None:
            continue  # nobody's: the ordinary scopes decide
        if artifact.owner.lower() in names or artifact.name.lower() in found.linked:
            continue
        denied.append(EXCLUDE + glob_literal(artifact.rel))
        if any(s.lower() in names for s in artifact.shared_with):
            shared.append(glob_literal(artifact.rel))
    return denied, shared
