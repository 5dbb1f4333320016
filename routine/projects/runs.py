"""The projects hook where a run starts (``runner.step.Runner.run_step``): for a run made for a
project, its facts as template variables (`project`, `project_brief`); the project manager's
own runs (`routine fire acme-pm`, a step of any block) get the brief in their task when the
task does not ask for it (``project_facts.md.j2``, the words the cadence's prompts use). The
agent's scopes are ``routine.access``'s, resolved before."""

from __future__ import annotations

from dataclasses import Field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from routine.projects.brief import project_brief
from routine.projects.model import find_project
from routine.projects.recommend import managed_project
from routine.prompts import template

if TYPE_CHECKING:
    from routine.config.model import AgentSpec
    from routine.journal.runs import RunDetails


class ProjectRun(Protocol):
    """What the hook reads of a run's request (``routine.runner.step.StepRequest``, a layer up): a
    dataclass, so that the hook returns it with its variables replaced."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def agent(self) -> AgentSpec: ...
    @property
    def task(self) -> str: ...
    @property
    def variables(self) -> dict[str, object]: ...
    @property
    def details(self) -> RunDetails: ...


_Request = TypeVar("_Request", bound=ProjectRun)


def for_run(vault: Path, req: _Request, now: datetime) -> tuple[_Request, str | None]:
    """(the request with the project's variables, project name)."""
    managed = managed_project(vault, req.agent)
    # A project manager's own run (`routine fire acme-pm`) is for its project.
    project = (req.details or {}).get("project") or (managed.name if managed else None)
    variables = dict(req.variables)
    task = req.task
    if project:
        found = find_project(vault, project)
        variables.setdefault("project", project)
        variables.setdefault("project_brief", project_brief(vault, found, now) if found else "")
        if managed is not None and managed.name == project and "project_brief" not in task:
            task = f"{task.rstrip()}\n\n{template('project_facts.md.j2')}"
    if variables == req.variables and task == req.task:
        return req, project
    return replace(req, variables=variables, task=task), project
