"""Who is assigned where, read from the vault as a person left it: the projects an agent is a
member or manager of (the home note's `manager` and `members`), and the notes holding tasks
assigned to it (``[assignee:: [[Name]]]`` on a task line). Pure reading: nothing here writes.

``routine.projects.membership.case_file_globs`` turns this into scope globs; `routine agent
show` and `routine agent assign` use it directly.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path, PurePosixPath

from routine.vault.frontmatter import split_frontmatter
from routine.vault.notes import vault_files

PROJECTS = "Projects"
# A Tasks/Dataview task line carrying an assignee: "- [ ] Draft the page [assignee:: [[Builder]]]".
# Linear in the note: nothing crosses a line end (a `\s*` at a line start would scan every blank
# line after it, for every line), and the link's name stops at any bracket.
TASK_ASSIGNEE = re.compile(r"^[ \t]*[-*+] \[[ xX/-]\][^\n]*?\[assignee::[ \t]*\[\[([^\[\]|#\n]+)(?:[#|][^\[\]\n]*)?\]\][ \t]*\]",
                           re.MULTILINE)


def link_names(agent_name: str) -> set[str]:
    """The wikilink targets that name an agent: its note's name in any case (Builder, builder)."""
    return {agent_name.lower()}


def names_agent(target: str, agent_name: str) -> bool:
    stem = PurePosixPath(target.strip().removeprefix("[[").removesuffix("]]").split("|")[0]).name
    return stem.removesuffix(".md").lower() in link_names(agent_name)


def _links(value) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [str(item) for item in items if item]


def _read(path: Path) -> str:
    from routine.errors import NoteUnreadable
    from routine.vault.files import read_regular

    try:
        return read_regular(path).decode("utf-8", errors="replace")  # never a pipe, a loop, a huge export
    except (OSError, NoteUnreadable):
        return ""


def project_homes(vault_root: Path) -> list[tuple[str, dict]]:
    """(project name, home note properties) for every Projects/<Name>/<Name>.md."""
    found: list[tuple[str, dict]] = []
    base = vault_root / PROJECTS
    if not base.is_dir():
        return found
    for folder in sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")):
        home = folder / f"{folder.name}.md"
        if home.is_file():
            found.append((folder.name, split_frontmatter(_read(home))[0]))
    return found


def projects_of(vault_root: Path, agent_name: str) -> list[str]:
    """The projects where the agent is the manager or a member."""
    return [name for name, props in project_homes(vault_root)
            if any(names_agent(link, agent_name) for link in _links(props.get("manager")) + _links(props.get("members")))]


# vault root -> {rel: (mtime_ns, size, assignee link targets)}: a note is read again only when
# it changed, so the scan at every agent load and step is a walk and a stat per note.
_SEEN: dict[Path, dict[str, tuple[int, int, tuple[str, ...]]]] = {}
_LOCK = threading.Lock()


def _assignees(vault_root: Path) -> dict[str, tuple[str, ...]]:
    with _LOCK:
        before = _SEEN.get(vault_root, {})
        now, base = {}, str(vault_root)
        for rel in vault_files(vault_root):
            if not rel.lower().endswith(".md"):
                continue
            try:
                st = os.stat(os.path.join(base, rel))
            except OSError:
                continue
            known = before.get(rel)
            if known and known[:2] == (st.st_mtime_ns, st.st_size):
                now[rel] = known
                continue
            text = _read(vault_root / rel)
            targets = tuple(TASK_ASSIGNEE.findall(text)) if "assignee::" in text else ()
            now[rel] = (st.st_mtime_ns, st.st_size, targets)
        _SEEN[vault_root] = now
        return {rel: entry[2] for rel, entry in now.items() if entry[2]}


def task_notes_of(vault_root: Path, agent_name: str) -> list[str]:
    """Vault-relative notes holding a task line assigned to the agent."""
    return sorted(rel for rel, targets in _assignees(vault_root).items()
                  if any(names_agent(target, agent_name) for target in targets))


def glob_literal(rel: str) -> str:
    """A path as a scope glob that matches only itself (glob characters put in brackets)."""
    return re.sub(r"([*?\[])", r"[\1]", rel)
