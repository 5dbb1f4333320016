"""What a changed note is to the projects, read once: ``read_changed_note(config, agents, change)``.

The vault-change decision (``flows/reactions.case_file``) reads a note's change here, in one
call, and decides on the value alone: whether it is a project's home note, an artifact edited since
its QA pass, which of its task lines are a person's, whose tasks are to be looked at, and which
manager reacts to it. Each fact comes from the one place that knows it (``artifacts``, ``assignees``,
``model``); nothing here decides what the daemon does with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from routine.config.model import AgentSpec, Config
from routine.projects.artifacts import read_artifact, stale_after_edit
from routine.projects.assignees import loose_task_notes, manager_agent, tasks_for_people
from routine.projects.model import PROJECTS, Project, is_home_note, loose, project_folder_of, read_project
from routine.projects.tasks import Task
from routine.watch.changes import Change


@dataclass(frozen=True)
class ChangedNote:
    """What the projects say of one changed note (nothing, for a note no project or agent reads)."""

    rel: str
    home: bool = False  # a project's home note (or it was one before a move)
    folder: str | None = None  # its project's folder; None outside every project, or when it is gone
    stale_qa: bool = False  # an artifact edited since it passed QA
    people_tasks: tuple[tuple[str, Task], ...] = ()  # its open task lines assigned to a person: (person, task)
    look_in: tuple[str, ...] = ()  # the folders whose agents' tasks are to be looked at again
    project: Project | None = None  # a home note's project, when its manager reacts to the edit
    manager: AgentSpec | None = None  # that manager (loaded; the project's `cadence: {react: off}` says none)


def read_changed_note(config: Config, agents: Mapping[str, AgentSpec], change: Change) -> ChangedNote:
    """What ``change`` of a note (in a case file, or a loose note an agent's `tasks:` names) is to the projects."""
    rel = change.rel
    if not rel.endswith(".md"):
        return ChangedNote(rel)
    if not rel.startswith(PROJECTS + "/"):
        return ChangedNote(rel, look_in=() if change.kind == "deleted" else _loose(config, agents, rel))
    home = is_home_note(rel) or bool(change.src and is_home_note(change.src))
    folder = project_folder_of(rel)
    if change.kind == "deleted" or folder is None:
        return ChangedNote(rel, home)
    vault = Path(config.vault)
    artifact = read_artifact(vault, rel)
    project = read_project(vault, vault / folder) if home else None
    manager = manager_agent(vault, project, agents) if project is not None and project.reacts else None
    return ChangedNote(rel, home, folder, stale_qa=artifact is not None and stale_after_edit(vault, artifact),
                       people_tasks=tuple(tasks_for_people(vault, rel)), look_in=(folder,),
                       project=project if manager is not None else None, manager=manager)


def _loose(config: Config, agents: Mapping[str, AgentSpec], rel: str) -> tuple[str, ...]:
    """A note outside every project: an agent note (its `tasks:` may name a new task note), or a
    note an agent's `tasks:` names (a task line there assigned or changed): the folders to look in."""
    if rel.startswith(config.layout.agents + "/"):
        if any(agent.source == rel for agent in agents.values()):
            return tuple(loose(note).folder for note in loose_task_notes(config.vault, "", rel))
        return ()
    if any(rel in loose_task_notes(config.vault, agent.name, agent.source) for agent in agents.values()):
        return (loose(rel).folder,)
    return ()
