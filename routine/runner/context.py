"""Gathering what goes into a step's prompt: grounding notes, declared inputs, earlier steps,
and the notes a step's `search:` finds.

Every read goes through the agent's `reads` scope (``routine.vault.scope.check_read``): the
runtime enforces permissions, whatever a schedule or model asks for. Search hits come from
the index already filtered to those scopes (``routine.memory.retrieve``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from routine.config.model import AgentSpec
from routine.errors import NoteUnreadable
from routine.templating import render
from routine.vault import (
    check_read,
    glob_match,
    read_note,
    resolve_wikilink,
    wikilink_for,
)

# Drop order under the token budget: lowest priority goes first.
PRIORITY_SEARCH = 1
PRIORITY_INPUT = 2
PRIORITY_GROUNDING = 3
PRIORITY_STEP = 4

MAX_GLOB_NOTES = 20


@dataclass
class ContextItem:
    label: str  # shown to the model as the heading of this piece of context
    text: str
    priority: int
    source: str | None = None  # vault-relative path, for provenance and citations
    order: int = 0


@dataclass
class Search:
    """A step's `search:`, its query rendered, and the index to ask."""

    query: str
    k: int
    memory: Any  # has VaultIndex.search's signature
    progress: Callable[[str, int, int], None] | None = None


@dataclass
class Gathered:
    items: list[ContextItem]
    missing: list[str]  # declared inputs that do not exist (yet): said to the model and journaled


def gather(vault: Path, agent: AgentSpec, inputs: tuple[str, ...], variables: dict, where: str,
           search: Search | None = None) -> Gathered:
    items: list[ContextItem] = []
    missing: list[str] = []
    seen: set[str] = set()

    def add_note(rel: str, priority: int) -> None:
        if rel in seen:
            return
        seen.add(rel)
        try:
            note = read_note(vault, rel)
        except NoteUnreadable as exc:  # a pipe, a loop, past the size cap: said, never a hang
            missing.append(f"{rel} ({exc.message})")
            return
        items.append(ContextItem(wikilink_for(rel), note.body.strip(), priority, rel, len(items)))

    for link in agent.grounding:
        target = link.strip().removeprefix("[[").removesuffix("]]").split("|")[0].split("#")[0]
        rel = resolve_wikilink(vault, target)
        if rel is None:
            missing.append(link)
            continue
        check_read(vault, list(agent.reads), rel, agent.name)
        add_note(rel, PRIORITY_GROUNDING)

    for i, raw in enumerate(inputs):
        text = render(raw, variables, f"{where}, inputs[{i}]")
        if "steps." in raw:  # an earlier step's output, not a path
            if text.strip():
                items.append(ContextItem(_step_label(raw), text.strip(), PRIORITY_STEP, None, len(items)))
            continue
        rel = text.strip()
        if any(ch in rel for ch in "*?["):
            for match in _expand_glob(vault, rel, agent)[:MAX_GLOB_NOTES]:
                add_note(match, PRIORITY_INPUT)
            continue
        path = check_read(vault, list(agent.reads), rel, agent.name)
        if not path.is_file():
            missing.append(rel)
            continue
        add_note(rel, PRIORITY_INPUT)

    if search is not None and search.query:
        # Notes already given whole are not offered again; the rest are ranked within the scopes.
        hits = search.memory.search(search.query, search.k, list(agent.reads), exclude=set(seen),
                                    progress=search.progress)
        for hit in hits:
            items.append(ContextItem(f"{hit.link} (found by search)", hit.text.strip(), PRIORITY_SEARCH,
                                     hit.path, len(items)))
    return Gathered(items, missing)


def _step_label(raw: str) -> str:
    name = raw.split("steps.", 1)[1].split(".", 1)[0]
    return f"Output of the {name} step, just now"


def _expand_glob(vault: Path, pattern: str, agent: AgentSpec) -> list[str]:
    """Notes matching a glob, newest first, only those the agent may read."""
    import os

    from routine.vault import in_scope
    from routine.vault.files import vault_files

    hits = []
    for rel in vault_files(vault):  # UTF-8 names, regular files, no hidden folders, no loops
        if rel.lower().endswith(".md") and glob_match(pattern, rel) and in_scope(list(agent.reads), rel):
            try:
                hits.append((os.stat(vault / rel).st_mtime, rel))
            except OSError:
                continue
    return [rel for _, rel in sorted(hits, reverse=True)]
