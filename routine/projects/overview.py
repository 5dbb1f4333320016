"""What `routine project list|show` and the dashboard say about a project (pure reading)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Protocol, TypedDict
from zoneinfo import ZoneInfo

from routine.projects.artifacts import artifacts_in, mark_needs_qa
from routine.projects.brief import gather
from routine.projects.model import Project, list_projects


class _Cron(Protocol):
    def next_after(self, after: datetime, tz: ZoneInfo) -> datetime | None: ...


class Block(Protocol):
    """What a project's listing reads of a schedule's block (``routine.schedule.model.Block``, a
    floor up: the schedule reads projects)."""

    @property
    def id(self) -> str: ...
    @property
    def cron(self) -> _Cron: ...
    @property
    def timezone(self) -> str | None: ...
    @property
    def project(self) -> str | None: ...


class NextFire(TypedDict):
    block: str
    at: str  # ISO


class MemberRow(TypedDict):
    name: str
    kind: str  # person | agent
    behaviour: str | None
    role: str


class OpenTask(TypedDict):
    text: str
    due: str | None
    state: str
    file: str
    result: str | None


class ProjectSummary(TypedDict):
    """`routine project show` (and its --json): a project as it stands."""

    project: str
    folder: str
    goal: str
    status: str
    key_results: list[str]
    manager: str | None
    members: list[MemberRow]
    open_tasks: dict[str, list[OpenTask]]  # by assignee
    blockers: list[str]
    artifacts: dict[str, dict[str, list[str]]]  # type -> QA state -> notes
    last_digest: str | None
    next_fires: list[NextFire]
    problems: list[str]


class DashboardRow(TypedDict):
    home: str
    status: str
    team: int
    open: int
    blockers: int
    digest: str | None


def last_digest(vault: Path, project: Project) -> str | None:
    folder = Path(vault) / project.folder / "Digests"
    notes = sorted(folder.glob("*.md"), key=lambda p: p.stat().st_mtime) if folder.is_dir() else []
    return notes[-1].relative_to(vault).as_posix() if notes else None


def next_fires(project: Project, blocks: Mapping[str, Block], now: datetime, zone: str) -> list[NextFire]:
    tz = ZoneInfo(zone)
    out: list[NextFire] = []
    for block in blocks.values():
        if block.project != project.name:
            continue
        at = block.cron.next_after(now, ZoneInfo(block.timezone) if block.timezone else tz)
        if at is not None:
            out.append({"block": block.id, "at": at.isoformat()})
    return sorted(out, key=lambda r: r["at"])


def recheck_qa(vault: Path, project: Project) -> None:
    """An artifact edited after it passed QA needs QA again (the daemon does this on every save;
    a listing does it too, so the answer is right without a daemon)."""
    for artifact in artifacts_in(vault, project.folder):
        mark_needs_qa(vault, artifact)


def summary(vault: Path, project: Project, blocks: Mapping[str, Block], now: datetime, zone: str) -> ProjectSummary:
    recheck_qa(vault, project)
    facts = gather(vault, project)
    artifacts: dict[str, dict[str, list[str]]] = {}
    for a in facts.artifacts:
        artifacts.setdefault(a.artifact_type.value, {}).setdefault(a.qa.value, []).append(a.rel)
    return {
        "project": project.name, "folder": project.folder, "goal": project.goal, "status": project.status.value,
        "key_results": list(project.key_results), "manager": project.manager,
        "members": [{"name": m.name, "kind": m.kind, "behaviour": m.behaviour.value if m.behaviour else None,
                     "role": m.role} for m in project.members],
        "open_tasks": {who: [{"text": t.text, "due": t.due, "state": t.state.name.lower(), "file": t.file,
                              "result": t.result} for t in tasks]
                       for who, tasks in facts.open_by_assignee.items()},
        "blockers": facts.all_blockers,
        "artifacts": artifacts,
        "last_digest": last_digest(vault, project),
        "next_fires": next_fires(project, blocks, now, zone),
        "problems": list(project.problems),
    }


def dashboard_rows(vault: Path) -> list[DashboardRow]:
    """One row per project for the dashboard: nothing in it moves with the clock."""

    rows: list[DashboardRow] = []
    for project in list_projects(vault):
        facts = gather(vault, project)
        rows.append({"home": project.home, "status": project.status.value, "team": len(project.members),
                     "open": sum(len(v) for v in facts.open_by_assignee.values()),
                     "blockers": len(facts.all_blockers), "digest": last_digest(vault, project)})
    return rows
