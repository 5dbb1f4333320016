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

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from routine.projects.model import AGENTS, Behaviour, Project, Status, list_projects
from routine.projects.tasks import Task, project_tasks

PROJECTS = "Projects"
MANAGER = "manager"
# A Tasks/Dataview task line carrying an assignee: "- [ ] Draft the page [assignee:: [[Builder]]]".
# Linear in the note: nothing crosses a line end (a `\s*` at a line start would scan every blank
# line after it, for every line), and the link's name stops at any bracket.
TASK_ASSIGNEE = re.compile(
    r"^[ \t]*[-*+] \[[ xX/-]\][^\n]*?\[assignee::[ \t]*\[\[([^\[\]|#\n]+)(?:[#|][^\[\]\n]*)?\]\][ \t]*\]", re.MULTILINE
)


def names_agent(target: str, agent_name: str) -> bool:
    """Does a wikilink target name the agent (its note's name in any case: Builder, builder)?"""
    stem = PurePosixPath(target.strip().removeprefix("[[").removesuffix("]]").split("|")[0]).name
    return stem.removesuffix(".md").lower() == agent_name.lower()


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
    return Assignments(tuple(memberships), tuple(tasks), frozenset(linked))
