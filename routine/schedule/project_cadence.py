"""A project's cadence as schedule blocks, derived from its home note (never a YAML file).

`cadence:` in the home note maps `digest` and `review` to a 5-field cron; missing keys take
the defaults below, `off` turns one off. The weekly review also reads the reviews and digests
of earlier weeks (``review_inputs``). The daemon re-derives the blocks whenever a home note
changes (``routine.daemon.project_events``), so an edit in Obsidian is a hot reload. The
project's manager (`manager:`) runs them; a project without a loaded manager has no cadence.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from routine.config.model import AgentSpec, Config, StepSpec, WriteSpec
from routine.errors import Problem
from routine.projects.assignees import agent_aliases, manager_agent
from routine.projects.model import Project, Status, list_projects
from routine.prompts import template
from routine.schedule.cron import Cron, CronError
from routine.schedule.model import Block
from routine.vault.scope import glob_literal

DEFAULT_CADENCE = {"digest": "0 9 * * *", "review": "0 16 * * 5"}
# kind -> (prompt, note, section)
KINDS = {
    "digest": ("project_digest.md.j2", "{{ project_folder }}/Digests/{{ today }}.md", "Daily digest"),
    "review": ("project_review.md.j2", "{{ project_folder }}/Digests/{{ iso_week }}.md", "Weekly review"),
}


def block_id(project: Project, kind: str) -> str:
    return f"{project.slug}-{kind}"


def project_blocks(config: Config, agents: dict[str, AgentSpec],
                   projects: list[Project] | None = None) -> tuple[dict[str, Block], list[Problem]]:
    """Every active project's digest and review blocks, and what is wrong in a cadence."""
    blocks: dict[str, Block] = {}
    problems: list[Problem] = []
    for project in list_projects(config.vault) if projects is None else projects:
        if project.status != Status.ACTIVE:
            continue
        manager = manager_agent(config.vault, project, agents)
        if manager is None:
            if project.manager:
                problems.append(Problem(project.home, None, "manager",
                                        f"the manager [[{project.manager}]] is not a loaded agent; the project has no "
                                        f"cadence until Agents/{project.manager}.md is a valid agent note."))
            continue
        cadence = {**DEFAULT_CADENCE, **project.cadence}
        for kind, (prompt, note, section) in KINDS.items():
            text = str(cadence.get(kind) or "").strip()
            if text.lower() in ("off", "none", "false", ""):
                continue
            try:
                cron = Cron.parse(text)
            except CronError as exc:
                problems.append(Problem(project.home, None, f"cadence.{kind}",
                                        f"bad cron {text!r}: {exc}; write five fields such as \"0 9 * * 1-5\"."))
                continue
            step = StepSpec(agent=manager.name, task=template(prompt),
                            inputs=review_inputs() if kind == "review" else (),
                            write=WriteSpec(note=note, section=section), variables=_folder(project))
            work = autonomous_steps(config.vault, project, agents, manager) if kind == "digest" else ()
            blocks[block_id(project, kind)] = Block(
                id=block_id(project, kind),
                file=project.home,
                cron=cron,
                timezone=config.timezone,
                steps=(*work, step),
                description=f"{project.name}: {kind}",
                missed="catch-up",
                grace=timedelta(hours=2),
                project=project.name,
            )
    return blocks, problems


def review_inputs() -> tuple[str, ...]:
    """What the weekly review reads besides the brief: the notes this cadence wrote in earlier
    weeks, the weekly reviews (`Digests/2026-W47.md`) first, then the daily digests, newest first.
    The project's folder goes in as a value (``project_glob``, literal in a glob)."""
    return ("{{ project_glob }}/Digests/*-W*.md", "{{ project_glob }}/Digests/*-*-*.md")


def autonomous_steps(vault: Path, project: Project, agents: dict[str, AgentSpec],
                     manager: AgentSpec) -> tuple[StepSpec, ...]:
    """Autonomous members work on the project's cadence: a step each before the digest, writing
    their section of the day's digest note (the manager's step sees their output)."""
    steps = []
    for member in project.members:
        if member.behaviour is None or not member.behaviour.works_on_cadence:
            continue
        agent = next(
            (a for a in agents.values() if member.name.lower() in agent_aliases(vault, a.name, a.source)), None
        )
        if agent is None or agent.name == manager.name:
            continue
        steps.append(StepSpec(agent=agent.name, task=template("project_work.md.j2"),
                              write=WriteSpec(note="{{ project_folder }}/Digests/{{ today }}.md",
                                              section="{{ member }}'s work"),
                              variables=(*_folder(project), ("member", member.name))))
    return tuple(steps)


def _folder(project: Project) -> tuple[tuple[str, str], ...]:
    """The project's folder is a name from the vault: a value its templates insert, never rendered."""
    return (("project_folder", project.folder), ("project_glob", glob_literal(project.folder)))
