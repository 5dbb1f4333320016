"""What project membership lets an agent read and write: the one source of truth.

An agent that is a project's manager or member may read its case file; autonomous and
reactive members (and the manager) may write there too, semi-autonomous ones only through
proposals (in a run for that project, or when the person approves one). An agent assigned a
task may read and write the note holding the task and the task's result note.

Ownership of artifacts: an agent writes only artifacts it owns or was assigned (a task
assigned to it links the artifact); every other artifact is excluded from its writes with a
`!path` glob, whatever its own scopes say. Artifacts shared with it become readable.

``effective_agent`` is applied where a run starts (``runner.step``) and where an approval
lands (``approval.decide``), so every tool, context read and write sees the same scopes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from routine.projects.model import (
    AGENTS,
    Behaviour,
    Project,
    Status,
    link_target,
    list_projects,
)
from routine.projects.tasks import project_tasks


def agent_aliases(vault: Path, agent_name: str, source: str | None = None) -> set[str]:
    """The lower-case names an agent goes by in links: its name and its note's name."""
    names = {agent_name.lower()}
    if source:
        names.add(Path(source).stem.lower())
        return names
    from routine.vault.files import read_text
    from routine.vault.frontmatter import split_frontmatter

    folder = Path(vault) / AGENTS
    for note in sorted(folder.glob("*.md")) if folder.is_dir() else ():
        try:
            props = split_frontmatter(read_text(note))[0]
        except OSError:
            continue
        if str(props.get("agent") or "").lower() == agent_name.lower():
            names.add(note.stem.lower())
    return names


@dataclass(frozen=True)
class Scopes:
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    proposal_writes: tuple[str, ...] = ()  # writable only as proposals (semi-autonomous)
    denied: tuple[str, ...] = ()           # artifacts it may not write ("!path")


def _role(project: Project, names: set[str]) -> Behaviour | str | None:
    if project.manager and project.manager.lower() in names:
        return "manager"
    for member in project.members:
        if member.kind == "agent" and member.name.lower() in names:
            return member.behaviour
    return None


def scopes(vault: Path, agent_name: str, source: str | None = None,
           projects: list[Project] | None = None) -> Scopes:
    vault = Path(vault)
    names = agent_aliases(vault, agent_name, source)
    projects = list_projects(vault) if projects is None else projects
    reads: list[str] = []
    writes: list[str] = []
    proposal: list[str] = []
    assigned_links: set[str] = set()
    for project in projects:
        tasks, _ = project_tasks(vault, project.folder)
        mine = [t for t in tasks if t.assignee and t.assignee.lower() in names]
        for task in mine:
            assigned_links.add(Path(task.file).stem.lower())
            if task.result:
                assigned_links.add(task.result.lower())
        if project.status != Status.ACTIVE:
            continue
        role = _role(project, names)
        if role is not None:
            reads.append(project.case_file_glob)
            (proposal if role == Behaviour.SEMI_AUTONOMOUS else writes).append(project.case_file_glob)
        for task in mine if role is None else ():
            reads.append(task.file)
            writes.append(task.file)
            if task.result:
                result = f"{project.folder}/{task.result}.md"
                reads.append(result)
                writes.append(result)
    denied, shared = _ownership(vault, names, assigned_links)
    return Scopes(reads=tuple(dict.fromkeys(reads + shared)), writes=tuple(dict.fromkeys(writes)),
                  proposal_writes=tuple(dict.fromkeys(proposal)), denied=tuple(denied))


def _ownership(vault: Path, names: set[str], assigned: set[str]) -> tuple[list[str], list[str]]:
    from routine.projects.artifacts import artifacts_in

    denied, shared = [], []
    for artifact in artifacts_in(vault):
        if artifact.owner is None:
            continue  # nobody's: the ordinary scopes decide
        mine = artifact.owner.lower() in names or artifact.name.lower() in assigned
        if not mine:
            denied.append("!" + artifact.rel)
            if any(s.lower() in names for s in artifact.shared_with):
                shared.append(artifact.rel)
    return denied, shared


def case_file_globs(vault_root: Path, agent_name: str) -> tuple[str, ...]:
    """The case-file globs of every active project where the agent is a member or manager,
    plus the notes of tasks assigned to it (and their result notes)."""
    found = scopes(vault_root, agent_name)
    return tuple(dict.fromkeys(found.reads + found.writes + found.proposal_writes))


def effective_agent(vault: Path, agent, project: str | None = None, approving: bool = False):
    """The agent with membership-derived scopes added and others' artifacts excluded.

    ``project``: a run for that project (a semi-autonomous member's writes there become
    proposals). ``approving``: the person approves a proposal it wrote.
    """
    found = scopes(vault, agent.name, agent.source)
    reads = tuple(dict.fromkeys(agent.reads + found.reads + found.proposal_writes))
    writes = agent.writes + found.writes
    approval = agent.approval
    if found.proposal_writes and (approving or project is not None):
        semi = [g for g in found.proposal_writes if project is None or g.startswith(f"Projects/{project}/")]
        writes += tuple(semi)
        if semi and project is not None:
            approval = "required"
    writes = tuple(dict.fromkeys(writes)) + found.denied
    if (reads, writes, approval) == (agent.reads, agent.writes, agent.approval):
        return agent
    return replace(agent, reads=reads, writes=writes, approval=approval)


def link_names_agent(link: object, agent) -> bool:
    return link_target(link).lower() in {agent.name.lower(), Path(agent.source).stem.lower()}
