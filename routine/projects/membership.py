"""Which case files an agent works in, as scope globs: the one place the runtime asks
(``routine.config.sandbox.with_assignments`` adds them to an agent's reads and writes)."""

from __future__ import annotations

from pathlib import Path

from routine.projects.assignees import (
    PROJECTS,
    glob_literal,
    projects_of,
    task_notes_of,
)


def case_file_globs(vault_root: Path, agent_name: str) -> tuple[str, ...]:
    """The case-file globs of the projects where the agent is a member or manager, plus the notes
    of the tasks assigned to it."""
    globs = [f"{PROJECTS}/{glob_literal(name)}/**" for name in projects_of(vault_root, agent_name)]
    globs += [glob_literal(rel) for rel in task_notes_of(vault_root, agent_name)]
    return tuple(dict.fromkeys(globs))
