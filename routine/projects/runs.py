"""The projects hook where a run starts (``runner.step.Runner.run_step``): for a run made for a
project, its facts as template variables (`project`, `project_brief`); the project manager's
own runs (`routine fire acme-pm`, a step of any block) get the brief in their task when the
task does not ask for it (``project_facts.md.j2``, the words the cadence's prompts use). The
agent's scopes are ``routine.access``'s, resolved before."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path


def for_run(vault: Path, req, now: datetime):
    """(the request with the project's variables, project name)."""
    from routine.projects.recommend import managed_project

    managed = managed_project(vault, req.agent)
    # A project manager's own run (`routine fire acme-pm`) is for its project.
    project = (req.details or {}).get("project") or (managed.name if managed else None)
    variables = dict(req.variables)
    task = req.task
    if project:
        from routine.projects.brief import project_brief
        from routine.projects.model import find_project

        found = find_project(vault, project)
        variables.setdefault("project", project)
        variables.setdefault("project_brief", project_brief(vault, found, now) if found else "")
        if managed is not None and managed.name == project and "project_brief" not in task:
            from routine.prompts import template

            task = f"{task.rstrip()}\n\n{template('project_facts.md.j2')}"
    if variables == req.variables and task == req.task:
        return req, project
    return replace(req, variables=variables, task=task), project
