"""A project as its home note says: `Projects/<Name>/<Name>.md` with the shared properties
(type, goal, status, key_results, manager, members, cadence, behaviours, roles)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PurePosixPath

from routine.config.behaviours import DEFAULT as DEFAULT_BEHAVIOUR
from routine.config.behaviours import NAMES as BEHAVIOURS
from routine.config.behaviours import Behaviour
from routine.config.behaviours import parse as parse_behaviour
from routine.jsonvalue import Parsed
from routine.vault.files import read_text
from routine.vault.frontmatter import split_frontmatter
from routine.vault.notes import read_note
from routine.vault.scope import glob_literal

PROJECTS = "Projects"
PEOPLE = "People"
AGENTS = "Agents"
REACT_OFF = ("off", "false", "no")  # a home note's `cadence: {react: ...}` that stops the manager's reactions


class Status(str, Enum):
    ACTIVE = "active"
    PAUSED = "paused"
    DONE = "done"


def link_target(link: object) -> str:
    """'Builder' for '[[Agents/Builder|the builder]]', '[[Builder]]' or 'Builder'."""
    text = str(link or "").strip().removeprefix("[[").removesuffix("]]")
    text = text.split("|", 1)[0].split("#", 1)[0].strip()
    return text.rsplit("/", 1)[-1].removesuffix(".md").strip()


def as_list(value: object) -> list[object]:
    if value is None or value == "":
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "project"


@dataclass(frozen=True)
class Member:
    name: str                    # the note's name, as linked ("Builder", "Ada")
    kind: str                    # person | agent
    behaviour: Behaviour | None  # agents only
    role: str = ""

    @property
    def link(self) -> str:
        return f"[[{self.name}]]"


@dataclass(frozen=True)
class Project:
    name: str
    folder: str                  # "Projects/Acme"
    goal: str = ""
    status: Status = Status.ACTIVE
    key_results: tuple[str, ...] = ()
    manager: str | None = None   # the PM agent note's name
    members: tuple[Member, ...] = ()
    cadence: dict[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()  # what the home note says that routine could not use

    @property
    def home(self) -> str:
        return f"{self.folder}/{self.name}.md"

    @property
    def case_file_glob(self) -> str:
        """Every note of the case file: the folder's name taken literally (a folder named `*`)."""
        return f"{glob_literal(self.folder)}/**"

    @property
    def slug(self) -> str:
        return slug(self.name)

    @property
    def reacts(self) -> bool:
        """Whether the manager reacts to an edit of the home note (`cadence: {react: off}` stops it)."""
        return str(self.cadence.get("react", "on")).lower() not in REACT_OFF

    def note_rel(self, stem: str) -> str:
        """The path of a note named ``stem`` in the project's folder (a task's result note)."""
        return f"{self.folder}/{stem}.md" if self.folder else f"{stem}.md"

    def member(self, name: str) -> Member | None:
        key = name.lower()
        return next((m for m in self.members if m.name.lower() == key), None)


def _pairs(values: object) -> dict[str, str]:
    """["Builder: reactive", "Ada: client lead"] -> {"builder": "reactive", "ada": "client lead"}."""
    out = {}
    for item in as_list(values):
        name, _, value = str(item).partition(":")
        if value.strip():
            out[link_target(name).lower()] = value.strip()
    return out


def member_kind(vault: Path, name: str) -> str:
    if (vault / AGENTS / f"{name}.md").is_file():
        return "agent"
    return "person"


def _agent_behaviour(vault: Path, name: str) -> str | None:
    """The agent note's own `behaviour:` (a custom agent's default), when the home note names none."""
    try:
        props = split_frontmatter(read_text(vault / AGENTS / f"{name}.md"))[0]
    except OSError:
        return None
    return str(props["behaviour"]) if props.get("behaviour") else None


def project_from_properties(vault: Path, folder: str, name: str, props: Parsed) -> Project:
    problems = []
    behaviours, roles = _pairs(props.get("behaviours")), _pairs(props.get("roles"))
    members = []
    for link in as_list(props.get("members")):
        member = link_target(link)
        if not member:
            continue
        kind = member_kind(vault, member)
        behaviour = None
        if kind == "agent":
            raw = behaviours.get(member.lower()) or _agent_behaviour(vault, member) or DEFAULT_BEHAVIOUR.value
            behaviour = parse_behaviour(raw)
            if behaviour is None:
                problems.append(f"behaviours: {member!r} has {raw!r}; use one of {', '.join(BEHAVIOURS)}.")
                behaviour = DEFAULT_BEHAVIOUR
        members.append(Member(member, kind, behaviour, roles.get(member.lower(), "")))
    try:
        status = Status(str(props.get("status") or "active").lower())
    except ValueError:
        problems.append(f"status: {props.get('status')!r} is not active, paused or done.")
        status = Status.ACTIVE
    raw_cadence = props.get("cadence")
    cadence: Parsed = raw_cadence if isinstance(raw_cadence, dict) else {}
    manager = link_target(props.get("manager")) or None
    return Project(name=name, folder=folder, goal=str(props.get("goal") or ""), status=status,
                   key_results=tuple(str(k) for k in as_list(props.get("key_results"))), manager=manager,
                   members=tuple(members), cadence={str(k): str(v) for k, v in cadence.items()},
                   problems=tuple(problems))


_SEEN: dict[
    str, tuple[tuple[int, int, int], Parsed, str | None]
] = {}  # home path -> ((mtime_ns, size, inode), properties, error)


def _home_properties(vault: Path, home: Path) -> tuple[Parsed, str | None]:
    """A home note's properties, parsed again only when it changed (every run reads them)."""
    stat = home.stat()
    key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    cached = _SEEN.get(str(home))
    if cached is None or cached[0] != key:
        note = read_note(vault, home.relative_to(vault).as_posix())
        cached = _SEEN[str(home)] = (key, note.frontmatter, note.frontmatter_error)
    return cached[1], cached[2]


def read_project(vault: Path, folder: Path) -> Project | None:
    """The project whose case file is ``folder``, or None when it has no home note."""
    home = folder / f"{folder.name}.md"
    try:
        props, error = _home_properties(vault, home)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    if str(props.get("type") or "project") != "project":
        return None
    project = project_from_properties(vault, folder.relative_to(vault).as_posix(), folder.name, props)
    if error:
        return Project(project.name, project.folder, problems=(f"{home.relative_to(vault).as_posix()}: {error}",))
    return project


def list_projects(vault: Path) -> list[Project]:
    root = Path(vault) / PROJECTS
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        project = read_project(Path(vault), folder)
        if project is not None:
            found.append(project)
    return found


def loose(rel: str) -> Project:
    """What stands for a project for a task line outside every project (an agent's `tasks:` note,
    `Inbox/Todo.md`): no name, no members; its folder is the note's, where its result note goes."""
    parent = str(PurePosixPath(rel).parent)
    return Project(name="", folder="" if parent == "." else parent)


def find_project(vault: Path, name: str) -> Project | None:
    key = name.strip().lower()
    return next((p for p in list_projects(vault) if p.name.lower() == key or p.slug == slug(name)), None)


def is_home_note(rel: str) -> bool:
    parts = rel.split("/")
    return len(parts) == 3 and parts[0] == PROJECTS and parts[2] == f"{parts[1]}.md"


def project_folder_of(rel: str) -> str | None:
    parts = rel.split("/")
    return "/".join(parts[:2]) if len(parts) >= 3 and parts[0] == PROJECTS else None
