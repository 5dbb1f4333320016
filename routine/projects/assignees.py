"""Who is assigned where: the one definition of "assigned", read from the vault as a person left
it. An agent is assigned to

- a project whose home note names it as `manager` or among its `members` (with the member's
  behaviour: autonomous, semi-autonomous, reactive, scheduled), and
- a task line in a project's case file carrying ``[assignee:: [[Name]]]`` (its note, and its
  ``[result:: [[Note]]]``).

An agent goes by its name and its note's name (``agent_aliases``). Pure reading: nothing here
writes, and nothing here decides what an assignment grants (``routine.access`` does).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterator

from routine.config.behaviours import DEFAULT as DEFAULT_BEHAVIOUR
from routine.config.behaviours import Behaviour
from routine.config.behaviours import parse as parse_behaviour
from routine.config.model import AgentSpec
from routine.errors import RoutineError
from routine.jsonvalue import Parsed
from routine.projects.model import AGENTS, Project, Status, link_target, list_projects, loose, member_kind
from routine.projects.tasks import TASK_ASSIGNEE as TASK_ASSIGNEE  # agents.assign reads task lines with it
from routine.projects.tasks import Task, note_tasks, project_tasks
from routine.vault.files import read_text
from routine.vault.frontmatter import split_frontmatter
from routine.vault.notes import resolve_wikilink

PROJECTS = "Projects"
MANAGER = "manager"


def names_agent(target: str, agent_name: str) -> bool:
    """Does a wikilink target name the agent (its note's name in any case: Builder, builder)?"""
    stem = PurePosixPath(target.strip().removeprefix("[[").removesuffix("]]").split("|")[0]).name
    return stem.removesuffix(".md").lower() == agent_name.lower()


TASK_NOTES = "tasks"  # an agent note's property: notes outside every project holding tasks assigned to it


def own_behaviour(raw: str | None) -> Behaviour:
    """An agent's behaviour outside any project: its note's `behaviour:`, else the default."""
    return parse_behaviour(raw or "") or DEFAULT_BEHAVIOUR


def _agent_notes(vault: Path, agent_name: str) -> Iterator[tuple[Path, Parsed]]:
    """The notes in Agents/ whose `agent:` is ``agent_name``, with their properties."""
    folder = Path(vault) / AGENTS
    for note in sorted(folder.glob("*.md")) if folder.is_dir() else ():
        try:
            props = split_frontmatter(read_text(note))[0]
        except OSError:
            continue
        if str(props.get("agent") or "").lower() == agent_name.lower():
            yield note, props


def _agent_properties(vault: Path, agent_name: str, source: str | None) -> Parsed:
    if not source:
        return next((props for _, props in _agent_notes(vault, agent_name)), {})

    try:
        return split_frontmatter(read_text(Path(vault) / source))[0]
    except OSError:
        return {}


def loose_task_notes(vault: Path, agent_name: str, source: str | None = None) -> tuple[str, ...]:
    """The notes outside every project its note's `tasks:` names (`routine agent assign --task`)."""
    listed = _agent_properties(vault, agent_name, source).get(TASK_NOTES) or []
    found = []
    for link in listed if isinstance(listed, list) else [listed]:
        rel = linked_note(vault, link)
        if rel and rel.endswith(".md") and not rel.startswith(PROJECTS + "/") and rel not in found:
            found.append(rel)
    return tuple(found)


def linked_note(vault: Path, link: object) -> str | None:
    """The note a `tasks:` entry ('[[Inbox/Todo]]', 'Inbox/Todo.md') names, as Obsidian resolves it."""
    target = str(link or "").strip().removeprefix("[[").removesuffix("]]").split("|", 1)[0].split("#", 1)[0]
    return resolve_wikilink(Path(vault), target.strip()) if target.strip() else None


def loose_tasks(vault: Path, agent_name: str, source: str | None = None) -> list[tuple[Project, Task]]:
    """The task lines assigned to the agent in its `tasks:` notes, each with what stands for its project."""
    names = agent_aliases(vault, agent_name, source)
    return [(loose(rel), task) for rel in loose_task_notes(vault, agent_name, source)
            for task in note_tasks(vault, rel)[0] if task.assignee and task.assignee.lower() in names]


def agent_aliases(vault: Path, agent_name: str, source: str | None = None) -> set[str]:
    """The lower-case names an agent goes by in links: its name and its note's name."""
    names = {agent_name.lower()}
    if source:
        names.add(Path(source).stem.lower())
        return names
    return names | {note.stem.lower() for note, _ in _agent_notes(vault, agent_name)}


def manager_agent(vault: Path, project: Project, agents: Mapping[str, AgentSpec]) -> AgentSpec | None:
    """The loaded agent the project's `manager:` names (by its name or its note's), if any."""
    if not project.manager:
        return None
    wanted = project.manager.lower()
    for agent in agents.values():
        if wanted in agent_aliases(vault, agent.name, agent.source):
            return agent
    return None


@dataclass(frozen=True)
class Membership:
    """An agent's place in an active project: ``role`` is MANAGER or the member's behaviour."""

    project: Project
    role: Behaviour | str


@dataclass(frozen=True)
class Assignments:
    """Everything an agent is assigned to now."""

    memberships: tuple[Membership, ...]  # active projects where it is manager or member
    tasks: tuple[tuple[Project, Task], ...]  # task lines assigned to it in active projects it is no member of
    linked: frozenset[str]  # lower-case names of notes its tasks (any project) hold or link as results

    @property
    def projects(self) -> tuple[str, ...]:
        return tuple(m.project.name for m in self.memberships)


def _role(project: Project, names: set[str]) -> Behaviour | str | None:
    if project.manager and project.manager.lower() in names:
        return MANAGER
    for member in project.members:
        if member.kind == "agent" and member.name.lower() in names:
            return member.behaviour
    return None


def assignments_of(vault: Path, agent_name: str, source: str | None = None) -> Assignments:
    """The projects and tasks the agent is assigned to, as the vault says now."""
    vault = Path(vault)
    names = agent_aliases(vault, agent_name, source)
    memberships: list[Membership] = []
    tasks: list[tuple[Project, Task]] = []
    linked: set[str] = set()
    for project in list_projects(vault):
        mine = [t for t in project_tasks(vault, project.folder)[0] if t.assignee and t.assignee.lower() in names]
        for task in mine:
            linked.add(Path(task.file).stem.lower())
            if task.result:
                linked.add(task.result.lower())
        if project.status != Status.ACTIVE:
            continue
        role = _role(project, names)
        if role is not None:
            memberships.append(Membership(project, role))
        else:
            tasks += [(project, task) for task in mine]
    for project, task in loose_tasks(vault, agent_name, source):
        linked.update({Path(task.file).stem.lower()} | ({task.result.lower()} if task.result else set()))
        tasks.append((project, task))
    return Assignments(tuple(memberships), tuple(tasks), frozenset(linked))


def tasks_for_people(vault: Path, rel: str) -> list[tuple[str, Task]]:
    """The open task lines of ``rel`` assigned to a person (`[assignee:: [[Ada]]]`, Ada not an
    agent): (the person, the task), in the note's order; none when it cannot be read."""
    try:
        tasks, _ = note_tasks(vault, rel)
    except RoutineError:
        return []
    found = []
    for task in tasks:
        person = link_target(task.assignee) if task.assignee else ""
        if task.open and person and member_kind(vault, person) == "person":
            found.append((person, task))
    return found
