"""The projects hook where a run starts (``runner.step.Runner.run_step``): for a run made for a
project, its facts as template variables (`project`, `project_brief`). The agent's scopes are
``routine.access``'s, resolved before."""

from __future__ import annotations

from dataclasses import Field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

if TYPE_CHECKING:
    from routine.config.model import AgentSpec


class ProjectRun(Protocol):
    """What the hook reads of a run's request (``routine.runner.step.StepRequest``, a layer up): a
    dataclass, so that the hook returns it with its variables replaced."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def agent(self) -> AgentSpec: ...
    @property
    def variables(self) -> dict: ...
    @property
    def details(self) -> dict: ...


_Request = TypeVar("_Request", bound=ProjectRun)


def for_run(vault: Path, req: _Request, now: datetime) -> tuple[_Request, str | None]:
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
