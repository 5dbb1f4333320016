"""`routine agent new`: an agent note grounded in the artifacts the person names.

A custom agent is a small sandbox (``routine.access``): it reads its grounding, works
in its own folder ``Agents/<Name>/`` (its results are appended to ``Agents/<Name>/Log.md``) and
in the case files it is assigned to, and uses only the tools it declares.
"""

from __future__ import annotations

import getpass
import re
from dataclasses import dataclass
from pathlib import Path

from routine.config.behaviours import DEFAULT as DEFAULT_BEHAVIOUR
from routine.config.behaviours import NAMES as BEHAVIOURS
from routine.config.model import Config
from routine.config.schema import TOOL_NAMES
from routine.config.tool_names import declared
from routine.errors import NoteExists, UsageError
from routine.vault.atomic import atomic_create
from routine.vault.frontmatter import join_frontmatter
from routine.vault.notes import resolve_wikilink, wikilink_for

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
DEFAULT_TOOLS = declared("read_note", "list_notes", "search_notes")

BODY = """You are **{title}**, a small custom agent. You are grounded in the notes under \
"Context from the vault" that are listed in your grounding: treat them as your knowledge and your \
method, and say so when they do not cover a question.

## Rules
1. Work only on what you are asked or assigned, inside your sandbox: your grounding, your own \
folder and the case files you are assigned to. Anything else is refused; do not try.
2. Cite the note behind each claim as a wikilink, e.g. {example}.
3. Never invent facts, figures, dates or links. If your notes do not say it, write "not in my notes".
4. Start with the first heading; no preamble, no sign-off. Under 400 words.
"""


@dataclass(frozen=True)
class NewAgent:
    name: str                      # as the person typed it: the note's file name
    sources: tuple[str, ...]       # the artifacts (paths or note names)
    model: str | None = None
    tools: tuple[str, ...] = ()
    behaviour: str | None = None
    role: str | None = None
    locked: bool = False
    author: str | None = None


def note_path(config: Config, name: str) -> Path:
    return config.vault / config.layout.agents / f"{name}.md"


def check_name(name: str) -> str:
    if not NAME.match(name):
        raise UsageError(f"{name!r} cannot name an agent.",
                         "use letters, digits, '-' or '_', starting with a letter, e.g. `Pricer`.")
    return name


def _grounding(config: Config, sources: tuple[str, ...]) -> list[str]:
    links = []
    for source in sources:
        folder = _folder_notes(config, source)
        if folder is not None:  # a folder: each of its notes
            links += [wikilink_for(rel) for rel in folder]
            continue
        rel = resolve_wikilink(config.vault, source)
        if rel is None or not (config.vault / rel).is_file():
            raise UsageError(f"There is no note or folder {source!r} in the vault to ground the agent in.",
                             "name an existing note by its path (Projects/X/Brief.md) or its name (Brief), "
                             "or a folder of notes (People).")
        links.append(wikilink_for(rel))
    if not links:
        raise UsageError("A custom agent needs at least one note to ground it.", "add --from NOTE (one or more).")
    return list(dict.fromkeys(links))


FOLDER_NOTES_MAX = 30  # a folder given to --from grounds the agent in at most this many notes


def _folder_notes(config: Config, source: str) -> list[str] | None:
    """The notes directly in the vault folder ``source`` (sorted), None when it is not a folder."""
    base = config.vault / source.strip("/")
    if not source.strip("/") or not base.is_dir() or not base.resolve().is_relative_to(config.vault.resolve()):
        return None
    notes = sorted(p.relative_to(config.vault).as_posix() for p in base.glob("*.md") if p.is_file())
    if not notes:
        raise UsageError(f"The folder {source!r} holds no notes to ground the agent in.",
                         "name notes, or a folder of notes.")
    if len(notes) > FOLDER_NOTES_MAX:
        raise UsageError(f"The folder {source!r} holds {len(notes)} notes; an agent is grounded in at most "
                         f"{FOLDER_NOTES_MAX}.", "name the notes that matter, or a smaller folder.")
    return notes


def _model(config: Config, alias: str | None) -> str:
    if alias is None:
        return "general" if "general" in config.models else next(iter(config.models))
    if alias not in config.models:
        raise UsageError(f"There is no model alias {alias!r} in {config.path.name}.",
                         f"use one of: {', '.join(config.models)}.")
    return alias


def _tools(tools: tuple[str, ...]) -> list[str]:
    unknown = [t for t in tools if t not in TOOL_NAMES]
    if unknown:
        raise UsageError(f"Unknown tool {', '.join(unknown)}.", f"choose from: {', '.join(TOOL_NAMES)}.")
    return list(dict.fromkeys(tools or DEFAULT_TOOLS))


def login_name() -> str:
    """The login name: an author when routine.yaml sets no `author:`."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no USER and no passwd entry (a container)
        return ""


def agent_text(config: Config, spec: NewAgent) -> str:
    name = check_name(spec.name)
    grounding = _grounding(config, spec.sources)
    if spec.behaviour and spec.behaviour not in BEHAVIOURS:
        raise UsageError(f"Unknown behaviour {spec.behaviour!r}.", f"choose from: {', '.join(BEHAVIOURS)}.")
    titles = ", ".join(link.strip("[]").rsplit("/", 1)[-1] for link in grounding)
    props = {
        "agent": name.lower(),
        "role": spec.role or f"Custom agent grounded in {titles}",
        "model": _model(config, spec.model),
        "custom": True,
        "author": spec.author or config.author or login_name(),
        "behaviour": spec.behaviour or DEFAULT_BEHAVIOUR.value,
        "tools": _tools(spec.tools),
        "grounding": grounding,
        "write": {"append": f"{config.layout.agents}/{name}/Log.md"},
        "task": "Do what you are assigned, using your grounding.",
    }
    if spec.locked:
        props["locked"] = True
    props["tags"] = ["routine/agent", "routine/custom-agent"]
    example = "[[" + grounding[0].strip("[]").rsplit("/", 1)[-1] + "]]"
    return join_frontmatter(props, "\n" + BODY.format(title=name, example=example))


def create(config: Config, spec: NewAgent) -> Path:
    path = note_path(config, check_name(spec.name))
    text = agent_text(config, spec)
    if path.exists():
        raise UsageError(f"There is already an agent note {path.relative_to(config.vault)}.",
                         "choose another name, or edit that note.")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        atomic_create(path, text)
    except NoteExists:
        raise UsageError(f"There is already an agent note {path.relative_to(config.vault)}.",
                         "choose another name, or edit that note.") from None
    return path
