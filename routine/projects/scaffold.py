"""Making and changing projects from the CLI: `routine project new|adopt|assign|unassign`.

Everything is a note edit the person could make in Obsidian: the home note's properties, a
task line, a People/ note, the project manager's agent note. Nothing is ever overwritten: a
new project refuses an existing folder (adopt it instead), adopting only adds what is
missing, and every rewrite lands only on the bytes it read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from routine import paths
from routine.config.behaviours import DEFAULT as DEFAULT_BEHAVIOUR
from routine.config.behaviours import NAMES as BEHAVIOURS
from routine.config.behaviours import parse as parse_behaviour
from routine.errors import NoteExists, UsageError
from routine.jsonvalue import JSONObject
from routine.projects.artifacts import set_properties
from routine.projects.model import (
    AGENTS,
    PEOPLE,
    PROJECTS,
    Project,
    as_list,
    find_project,
    link_target,
    read_project,
    slug,
)
from routine.projects.tasks import parse_line, with_field, without_field
from routine.vault.atomic import atomic_create
from routine.vault.files import read_text
from routine.vault.frontmatter import join_frontmatter, parse_frontmatter
from routine.vault.writer import _rewrite

if TYPE_CHECKING:
    from routine.vault.notes import NoteText

PM_TEMPLATE = "Templates/Project Manager.md"
_BAD_NAME = re.compile(r'[\\/:*?"<>|#^\[\]%]')


def _check_name(name: str) -> str:
    name = " ".join(name.split())
    if not name or _BAD_NAME.search(name) or name.startswith("."):
        raise UsageError(f"{name!r} cannot be a project name: Obsidian links break on / \\ : * ? \" < > | # ^ [ ] %.",
                         "choose a name of letters, digits, spaces and dashes, e.g. 'Acme Launch'.")
    return name


def agent_slug(name: str) -> str:
    s = slug(name)
    return s if s[0].isalpha() else f"p-{s}"


def _pm_template(vault: Path) -> str:
    own = vault / PM_TEMPLATE
    source = own if own.is_file() else paths.shipped("vault_templates") / PM_TEMPLATE
    return source.read_text(encoding="utf-8")


def _create(path: Path, text: str) -> bool:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        atomic_create(path, text)
        return True
    except NoteExists:
        return False


def ensure_manager(vault: Path, name: str) -> tuple[str, bool]:
    """The project manager's agent note (`Agents/<Name> PM.md`), made from the template if
    missing; (its name, whether it was created)."""
    note = f"{name} PM"
    text = _pm_template(vault).replace("__PROJECT__", name).replace("__SLUG__", agent_slug(name))
    return note, _create(vault / AGENTS / f"{note}.md", text)


class Scaffolded(TypedDict):
    """What `routine project new|adopt` did (its --json)."""

    project: str
    home: str
    manager: str  # the manager's agent note
    created: list[str]  # the notes made


def home_properties(name: str, goal: str, manager: str) -> JSONObject:
    return {"type": "project", "goal": goal, "status": "active", "key_results": [],
            "manager": f"[[{manager}]]", "members": [], "behaviours": [], "roles": [],
            "cadence": {"digest": "0 9 * * *", "review": "0 16 * * 5"}, "tags": ["routine/project"]}


def home_body(name: str, goal: str) -> str:
    return (f"# {name}\n\n{goal or 'What is this project for?'}\n\n## Tasks\n\n"
            "## Blockers\n\n## Notes\n")


def new_project(vault: Path, name: str, goal: str = "") -> Scaffolded:
    name = _check_name(name)
    folder = vault / PROJECTS / name
    if folder.exists():
        raise UsageError(f"Projects/{name}/ already exists, so routine made nothing (it never overwrites a project).",
                         f"adopt it with `routine project adopt {name!r}`, or choose another name.")
    manager, made_pm = ensure_manager(vault, name)
    home = folder / f"{name}.md"
    _create(home, join_frontmatter(home_properties(name, goal, manager), home_body(name, goal)))
    return {"project": name, "home": home.relative_to(vault).as_posix(), "manager": f"Agents/{manager}.md",
            "created": [home.relative_to(vault).as_posix()] + ([f"Agents/{manager}.md"] if made_pm else [])}


def adopt_project(vault: Path, name: str) -> Scaffolded:
    """A folder made by hand becomes a project: its home note gains the missing properties
    (or is created), a manager is made if it has none. Its files are never overwritten."""
    name = _check_name(name)
    folder = vault / PROJECTS / name
    if not folder.is_dir():
        raise UsageError(f"There is no folder Projects/{name}/ to adopt.",
                         f"create it first, or make a new project with `routine project new {name!r}`.")
    home = folder / f"{name}.md"
    created = []
    if not home.exists():
        manager, made_pm = ensure_manager(vault, name)
        _create(home, join_frontmatter(home_properties(name, "", manager), home_body(name, "")))
        created.append(home.relative_to(vault).as_posix())
    else:
        split = parse_frontmatter(home.read_text(encoding="utf-8"))
        if not split.readable:
            raise UsageError(f"Projects/{name}/{name}.md has properties routine cannot read ({split.error}).",
                             "fix its YAML frontmatter in Obsidian, then adopt again.")
        manager = link_target(split.data.get("manager"))
        made_pm = False
        if not manager:
            manager, made_pm = ensure_manager(vault, name)
        missing = {k: v for k, v in home_properties(name, "", manager).items() if k not in split.data}
        if missing:
            set_properties(vault, home.relative_to(vault).as_posix(), missing)
    if made_pm:
        created.append(f"Agents/{manager}.md")
    return {"project": name, "home": home.relative_to(vault).as_posix(), "manager": f"Agents/{manager}.md",
            "created": created}


def project_named(vault: Path, name: str) -> Project:
    project = find_project(vault, name)
    if project is None:
        raise UsageError(f"There is no project {name!r} (no Projects/{name}/{name}.md).",
                         "`routine project list` shows them; `routine project new NAME` makes one.")
    return project


def member_note(vault: Path, member: str, create_person: bool) -> tuple[str, str]:
    """(note name, kind) of a member given by note name or agent name; a new person gets a
    People/ note when ``create_person``."""
    wanted = link_target(member)
    agents = vault / AGENTS
    for note in sorted(agents.glob("*.md")) if agents.is_dir() else ():
        try:
            props = parse_frontmatter(read_text(note)).data
        except OSError:
            continue
        named = note.stem.lower() == wanted.lower() or str(props.get("agent") or "").lower() == wanted.lower()
        if named and "agent" in props:
            return note.stem, "agent"
    person = vault / PEOPLE / f"{wanted}.md"
    if not person.exists() and create_person:
        _check_name(wanted)
        _create(person, join_frontmatter({"type": "person", "role": ""}, f"# {wanted}\n"))
    return wanted, "person"


def _set_pair(values: object, name: str, value: str | None) -> list[object]:
    kept = [v for v in as_list(values) if link_target(str(v).partition(":")[0]).lower() != name.lower()]
    return kept + ([f"{name}: {value}"] if value else [])


def assign(vault: Path, name: str, member: str, task: str | None = None, behaviour: str | None = None,
           role: str | None = None, due: str | None = None) -> JSONObject:
    project = project_named(vault, name)
    note, kind = member_note(vault, member, create_person=True)
    if behaviour is not None:
        known = parse_behaviour(behaviour)
        if known is None:
            raise UsageError(f"{behaviour!r} is not a behaviour.", f"use --as {', '.join(BEHAVIOURS)}.")
        behaviour = known.value
        if kind != "agent":
            raise UsageError(f"{note} is a person; only agents have a behaviour.", "drop --as for a person.")
    props = parse_frontmatter((vault / project.home).read_text(encoding="utf-8")).data
    updates: dict[str, object] = {}
    members = as_list(props.get("members"))
    if all(link_target(m).lower() != note.lower() for m in members):
        updates["members"] = members + [f"[[{note}]]"]
    current = project.member(note)
    if kind == "agent" and (behaviour or current is None):
        updates["behaviours"] = _set_pair(props.get("behaviours"), note, behaviour or DEFAULT_BEHAVIOUR.value)
    if role:
        updates["roles"] = _set_pair(props.get("roles"), note, role)
    if updates:
        set_properties(vault, project.home, updates)
    line = add_or_reassign_task(vault, project, task, note, due) if task else None
    return {"project": project.name, "member": note, "kind": kind, "task": line,
            "behaviour": behaviour or (current.behaviour.value if current and current.behaviour else
                                       (DEFAULT_BEHAVIOUR.value if kind == "agent" else None))}


def add_or_reassign_task(vault: Path, project: Project, text: str, member: str | None, due: str | None) -> str:
    """Assign the task `text` in the home note to ``member`` (moving it if it exists anywhere in
    the case file's home note; otherwise adding the line under `## Tasks`)."""
    text = " ".join(text.split())
    if due and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", due):
        raise UsageError(f"--due {due!r} is not a date.", "write it as YYYY-MM-DD.")
    out = {}

    def change(current: NoteText | None) -> str | None:
        body = current.text if current is not None else ""
        lines = body.split("\n")
        for i, line in enumerate(lines):
            task = parse_line(project.home, i, line)
            if task is not None and task.text == text:
                new = with_field(line, "assignee", f"[[{member}]]") if member else without_field(line, "assignee")
                out["line"] = new
                if new == line:
                    return None
                lines[i] = new
                return "\n".join(lines)
        if member is None:
            raise UsageError(f"There is no task {text!r} in {project.home}.", "copy the task's text exactly.")
        new = f"- [ ] {text} [assignee:: [[{member}]]]" + (f" 📅 {due}" if due else "")
        out["line"] = new
        at = next((i for i, line in enumerate(lines) if line.strip().lower() == "## tasks"), None)
        if at is None:
            return body.rstrip("\n") + "\n\n## Tasks\n\n" + new + "\n"
        end = at + 1
        while end < len(lines) and (not lines[end].strip() or parse_line(project.home, end, lines[end])):
            end += 1
        while end > at + 1 and not lines[end - 1].strip():
            end -= 1
        lines.insert(end, new)
        if end == at + 1:
            lines.insert(end, "")
        return "\n".join(lines)

    _rewrite(vault / project.home, project.home, change)
    return out["line"]


def unassign(vault: Path, name: str, member: str, task: str | None = None) -> JSONObject:
    project = project_named(vault, name)
    note, _ = member_note(vault, member, create_person=False)
    if task:
        line = add_or_reassign_task(vault, project, task, None, None)
        return {"project": project.name, "member": note, "task": line}
    if project.member(note) is None:
        raise UsageError(
            f"{note} is not a member of {project.name}.", f"`routine project show {project.name!r}` lists them."
        )
    props = parse_frontmatter((vault / project.home).read_text(encoding="utf-8")).data
    set_properties(vault, project.home, {
        "members": [m for m in as_list(props.get("members")) if link_target(m).lower() != note.lower()],
        "behaviours": _set_pair(props.get("behaviours"), note, None),
        "roles": _set_pair(props.get("roles"), note, None)})
    return {"project": project.name, "member": note, "removed": True}


def reread(vault: Path, project: Project) -> Project:
    return read_project(vault, vault / project.folder) or project
