"""A project's facts in a few lines, for its manager's digest and review and for
`routine project show`: members and what each is doing, open tasks by assignee, blockers,
artifacts by type and QA state, and what changed in the case file since yesterday."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from routine.projects.artifacts import Artifact, artifacts_in
from routine.projects.model import Project
from routine.projects.reminders import due_date, due_words
from routine.projects.tasks import Task, case_file_notes, project_tasks


@dataclass
class Facts:
    project: Project
    tasks: list[Task]
    blockers: list[str]
    artifacts: list[Artifact]
    changed: list[str] = field(default_factory=list)

    @property
    def open_by_assignee(self) -> dict[str, list[Task]]:
        out: dict[str, list[Task]] = {}
        for task in self.tasks:
            if task.open:
                out.setdefault(task.assignee or "(unassigned)", []).append(task)
        return out

    @property
    def all_blockers(self) -> list[str]:
        return [f"{t.text}: {t.blocker}" for t in self.tasks if t.open and t.blocker] + self.blockers


def gather(vault: Path, project: Project, now: datetime | None = None) -> Facts:
    tasks, blockers = project_tasks(vault, project.folder)
    facts = Facts(project, tasks, blockers, artifacts_in(vault, project.folder))
    if now is not None:
        since = (now - timedelta(days=1)).timestamp()
        facts.changed = [rel for rel in case_file_notes(vault, project.folder)
                         if (Path(vault) / rel).stat().st_mtime >= since]
    return facts


def _task_line(task: Task, today: date | None = None) -> str:
    """A task as the brief (and so the digest) says it: its state, when it is due (`due tomorrow`,
    `overdue since …` once the day is known), its result."""
    state = {" ": "open", "/": "in progress", "x": "done", "-": "cancelled"}[task.state.value]
    due = due_date(task)
    when = due_words(due, today) if due and today and task.open else f"due {task.due}"
    extra = [state] + ([when] if task.due else []) + ([f"result [[{task.result}]]"] if task.result else [])
    return f"{task.text} ({', '.join(extra)})"


def project_brief(vault: Path, project: Project, now: datetime | None = None) -> str:
    facts = gather(vault, project, now)
    today = now.date() if now else None
    lines = [f"Project {project.name} ({project.status.value}); goal: {project.goal or 'not set'}."]
    if project.key_results:
        lines.append("Key results: " + ", ".join(project.key_results))
        lines += [f"- {line}" for line in key_result_text(vault, project)]
    lines.append("Team and what each is doing:")
    by = facts.open_by_assignee
    done = [t for t in facts.tasks if t.state.value == "x"]
    for member in project.members:
        what = member.behaviour.value if member.behaviour else "person"
        role = f", {member.role}" if member.role else ""
        mine = by.get(member.name, [])
        doing = "; ".join(_task_line(t, today) for t in mine) or "no open task"
        finished = [t.text for t in done if t.assignee == member.name]
        lines.append(f"- {member.name} ({what}{role}): {doing}"
                     + (f"; done: {'; '.join(finished)}" if finished else ""))
    not_members = {k: v for k, v in by.items() if project.member(k) is None}
    for assignee, tasks in not_members.items():
        lines.append(f"- {assignee}: " + "; ".join(_task_line(t, today) for t in tasks))
    blockers = facts.all_blockers
    lines.append("Blockers: " + ("; ".join(blockers) if blockers else "none written."))
    if facts.artifacts:
        lines.append("Artifacts: " + "; ".join(f"[[{a.name}]] ({a.artifact_type.value}, QA {a.qa.value})"
                                                for a in facts.artifacts))
    others = _library_agents(vault, project)
    if others:
        lines.append("Agents in the library, not on the team: " + ", ".join(others))
    if now is not None:
        lines.append(
            "Changed since yesterday: " + (", ".join(f"[[{rel[:-3]}]]" for rel in facts.changed) or "nothing.")
        )
    return "\n".join(lines)


MAX_KR_LINES = 12


def key_result_text(vault: Path, project: Project) -> list[str]:
    """What the key results the home note links say, from the plan or OKRs note they are in
    (``[[OKRs#KR 1.1]]`` -> "KR 1.1: five users — current 2 / target 5 ([[Plans/OKRs#KR 1.1]])");
    a link to the whole note gives its objectives and key results."""
    from routine.graph.extract import link_targets, okr_items
    from routine.vault.notes import read_note, resolve_wikilink

    lines: list[str] = []
    for target in (t for link in project.key_results for t in link_targets(link)):
        base, _, heading = target.partition("#")
        rel = resolve_wikilink(vault, base)
        if rel is None:
            continue
        try:
            items = okr_items(read_note(vault, rel).body)
        except OSError:
            continue
        wanted = heading.strip().lower()  # "KR 1.1", or the whole heading "KR 1.1: five users"
        chosen = [i for i in items if not wanted or wanted.split(":")[0].strip() == i.name.lower()]
        lines += [f"{item.line} ([[{rel[:-3]}#{item.name}]])" for item in chosen]
    return list(dict.fromkeys(lines))[:MAX_KR_LINES]


def _library_agents(vault: Path, project: Project) -> list[str]:
    """The agent notes not on the team (nor the manager): candidates the manager may recommend."""
    folder = Path(vault) / "Agents"
    team = {m.name.lower() for m in project.members} | {(project.manager or "").lower()}
    return [p.stem for p in sorted(folder.glob("*.md")) if p.stem.lower() not in team
            and not p.stem.endswith(" PM")] if folder.is_dir() else []
