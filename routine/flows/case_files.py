"""What the daemon carries out for a project's case file once ``flows/reactions.py`` decided it: an
artifact edited after its QA pass goes back to `qa: needed`; the manager's reaction to an edit of
the home note is one step, written into the day's digest under "Changes"."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from routine.config.model import AgentSpec, WriteSpec
from routine.projects.artifacts import mark_needs_qa, read_artifact
from routine.projects.model import find_project
from routine.prompts import template
from routine.runner.request import StepRequest


def needs_qa_again(vault: Path, rel: str) -> bool:
    """`qa: needed` on ``rel`` if it changed since it passed QA; True if it was marked."""
    artifact = read_artifact(vault, rel)
    return artifact is not None and mark_needs_qa(vault, artifact)


def react_request(vault: Path, agents: Mapping[str, AgentSpec], agent_name: str, project: str, rel: str,
                  kind: str) -> StepRequest | None:
    """The manager's step reacting to ``rel``'s change; None when the agent or the project is gone."""
    agent = agents.get(agent_name)
    found = find_project(vault, project)
    if agent is None or found is None:
        return None
    return StepRequest(
        agent=agent,
        task=template("project_react.md.j2"),
        write=WriteSpec(note="{{ project_folder }}/Digests/{{ today }}.md", section="Changes"),
        trigger=f"trigger:{rel}",
        variables={"path": rel, "event": kind, "project_folder": found.folder},
        details={"project": project, "path": rel, "event": kind},
    )
