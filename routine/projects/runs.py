"""The projects hook where a run starts (``runner.step.Runner.run_step``): for a run made for a
project, its facts as template variables (`project`, `project_brief`). The agent's scopes are
``routine.access``'s, resolved before."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path


def for_run(vault: Path, req, now: datetime):
    """(the request with the project's variables, project name)."""
    project = (req.details or {}).get("project")
    if not project:  # a project manager's own run (`routine fire acme-pm`) is for its project
        from routine.projects.recommend import managed_project

        managed = managed_project(vault, req.agent)
        project = managed.name if managed else None
    variables = dict(req.variables)
    if project:
        from routine.projects.brief import project_brief
        from routine.projects.model import find_project

        found = find_project(vault, project)
        variables.setdefault("project", project)
        variables.setdefault("project_brief", project_brief(vault, found, now) if found else "")
    if variables == req.variables:
        return req, project
    return replace(req, variables=variables), project
