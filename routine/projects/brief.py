"""A project's facts in a few lines, for its manager's digest and review and for
`routine project show`: members and what each is doing, open tasks by assignee, blockers,
artifacts by type and QA state, and what changed in the case file since yesterday."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from routine import paths
from routine.atomicfile import replace_if_changed
from routine.projects.artifacts import Artifact, artifacts_in
from routine.projects.model import Project
from routine.projects.reminders import due_date, due_words
from routine.projects.tasks import Task, case_file_notes, project_tasks
from routine.vault.bookkeeping import PROPERTY
from routine.vault.files import read_text
from routine.vault.frontmatter import parse_frontmatter
from routine.vault.notes import link_targets, read_note, resolve_wikilink
from routine.vault.okrs import okr_items
from routine.vault.provenance import persons_words


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
        facts.changed = persons_changes(vault, case_file_notes(vault, project.folder), now)
    return facts


SEEN_FILE = "brief-seen.json"  # in the state dir: each case-file note's words of the person's, as last seen


def persons_changes(vault: Path, notes: list[str], now: datetime) -> list[str]:
    """The notes whose words of the person's (``provenance.persons_words``) changed in the last
    day: changed since an earlier brief saw them, or, seen the first time, saved in the last day
    with words of theirs, by them (routine's bookkeeping does not name that save). Routine's writes
    (its sections, its digests, a task's result note, its bookkeeping) change none of those words."""
    import hashlib
    import json

    store = paths.state_dir() / SEEN_FILE
    try:
        seen: dict[str, list[str | None]] = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        seen = {}
    since, changed = now - timedelta(days=1), []
    for rel in notes:
        path = Path(vault) / rel
        try:
            text = read_text(path)
            saved = datetime.fromtimestamp(path.stat().st_mtime, now.tzinfo)
        except (OSError, ValueError):
            continue
        words = persons_words(rel, text)
        sha = hashlib.sha1(words.encode("utf-8")).hexdigest()[:16]
        old = seen.get(rel)
        if old is None:
            at = saved.isoformat() if words and saved >= since and not _routine_saved(text, saved) else None
        else:
            at = now.isoformat() if old[0] != sha else old[1]
        seen[rel] = [sha, at]
        if at is not None and datetime.fromisoformat(at) >= since:
            changed.append(rel)
    seen = {rel: v for rel, v in seen.items() if (Path(vault) / rel).exists()}
    store.parent.mkdir(parents=True, exist_ok=True)
    replace_if_changed(store, json.dumps(seen, sort_keys=True), mode=0o600)
    return changed


def _routine_saved(text: str, saved: datetime) -> bool:
    """Was the note's last save routine's (its ``routine: {at}`` bookkeeping names that moment)?"""
    stamp = parse_frontmatter(text).data.get(PROPERTY)
    try:
        at = datetime.fromisoformat(str(stamp.get("at"))) if isinstance(stamp, dict) else None
        return at is not None and at >= saved - timedelta(seconds=2)
    except (TypeError, ValueError):  # a person's own `routine:` property, or a naive time
        return False


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
