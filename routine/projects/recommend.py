"""The project manager's recommendations and task breakdowns, as proposals the person decides.

A recommended cognitive artifact is a proposal for a new note in the case file holding the
template's text: approving it (`approved: true`, or `routine approve`) creates the note, so the
template is instantiated by the ordinary approval path. Proposed tasks are an entry for the
home note; approving appends the task lines.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from routine.errors import UsageError
from routine.jsonvalue import Parsed
from routine.projects.assignees import agent_aliases
from routine.projects.library import free_name, instance_text, template_named, templates
from routine.projects.model import Project, list_projects
from routine.vault import WriteTarget, write_output
from routine.vault.proposals import write_proposal

if TYPE_CHECKING:
    from routine.config.model import AgentSpec
    from routine.vault.bookkeeping import Provenance


def managed_project(vault: Path, agent: AgentSpec) -> Project | None:
    names = agent_aliases(vault, agent.name, agent.source)
    return next((p for p in list_projects(vault) if p.manager and p.manager.lower() in names), None)


def _managed(vault: Path, agent: AgentSpec) -> Project:
    project = managed_project(vault, agent)
    if project is None:
        raise UsageError(f"{agent.name} manages no project.", "only a project's manager recommends for it.")
    return project


def recommend_artifact(vault: Path, agent: AgentSpec, model: str, run: str, now: datetime, drafts: str,
                       template: str, reason: str) -> str:
    """Write the proposal; returns its path."""
    project = _managed(vault, agent)
    stem, _ = template_named(vault, template)
    target = free_name(vault, project, stem)
    text = instance_text(vault, stem, Path(agent.source).stem, [m.name for m in project.members], [project.name])
    why = (f"{Path(agent.source).stem} recommends a **{stem}** for {project.name}: {reason.strip() or 'it helps now'}. "
           f"Approve to add it to the case file as {target}.")
    return write_proposal(vault, drafts, target_rel=target, section=None, proposed=text, current=None, reason=why,
                          agent=agent.name, model=model, run=run, generated=now, sources=[project.home], kind="note")


def propose_tasks(vault: Path, agent: AgentSpec, prov: Provenance, drafts: str, tasks: list[Parsed]) -> str:
    project = _managed(vault, agent)
    lines = []
    for task in tasks:
        text = " ".join(str(task.get("text") or "").split())
        if not text:
            continue
        line = f"- [ ] {text}"
        if task.get("assignee"):
            line += f" [assignee:: [[{str(task['assignee']).strip().strip('[]')}]]]"
        if task.get("due"):
            line += f" 📅 {task['due']}"
        lines.append(line)
    if not lines:
        raise UsageError("No task had a text.", "give each task a `text`.")
    result = write_output(vault, WriteTarget(append=project.home), "\n".join(lines) + "\n", prov,
                          list(agent.writes), drafts_dir=drafts, approval_required=True)
    return result.proposal_rel or result.rel


def library_names(vault: Path) -> list[str]:
    return sorted(templates(vault))
