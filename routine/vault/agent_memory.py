"""An agent's memory: a note the person can read and correct, `Agents/<Name>/Memory.md`.

Each entry is one dated, sourced line (`… — [[Daily/2026-11-24]] ^keep-12`: the note it was
learned from, or `chat ID` for a terminal conversation) that routine learned from the evidence of the agent's
runs (``routine.journal.lessons``): what the person kept or rewrote of its sections, what they
decided about its proposals, what a review found, what they told it in chat. An entry ends with
its evidence key as an Obsidian block id (``^keep-12``); routine remembers every key it has
learned, so a line the person deletes is not learned again from the same evidence. Lines the
person writes themselves are kept as they are. At most ``MAX_ENTRIES`` of routine's lines stay,
the newest; the note is read back into the agent's context (``routine.runner.recall``), each entry
only while the agent may read its source note.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from routine.vault.atomic import NoteChanged, atomic_write
from routine.vault.frontmatter import join_frontmatter, parse_frontmatter
from routine.vault.notes import load_note_text

NOTE_NAME = "Memory.md"
MAX_ENTRIES = 24
MAX_ENTRY_CHARS = 280
_ENTRY = re.compile(r"^- (?P<day>\d{4}-\d{2}-\d{2}) · (?P<text>.*?)"
                    r"(?: — (?:\[\[(?P<note>[^\[\]|#\n]+)\]\]|(?P<chat>chat [\w-]+)))? \^(?P<key>[a-z]+-[\w-]+)\s*$")
INTRO = ("What routine has learned from {title}'s runs, newest first: what you kept or rewrote, what you "
         "decided about its proposals, what reviews found, what you told it in chat. Edit or delete any "
         "line; a deleted one is not learned again. Lines you add yourself are kept.")


@dataclass(frozen=True)
class Entry:
    day: date
    text: str
    key: str  # the evidence it was learned from: `keep-12`, `decision-3`, `review-…`, `chat-40`
    # Where it was learned: a vault note (its path: the agent is given the entry only while it may
    # read that note), `chat ID` (a terminal conversation with it), or None (a line without one).
    source: str | None = None

    def render(self) -> str:
        text = " ".join(self.text.split())
        if len(text) > MAX_ENTRY_CHARS:
            text = text[:MAX_ENTRY_CHARS - 1].rstrip() + "…"
        return f"- {self.day.isoformat()} · {text}{self._where()} ^{self.key}"

    def _where(self) -> str:
        if self.source is None:
            return ""
        if self.source.startswith("chat "):
            return f" — {self.source}"
        return f" — [[{self.source.removesuffix('.md')}]]"

    @property
    def note(self) -> str | None:
        """The vault note it was learned from, if any."""
        return None if self.source is None or self.source.startswith("chat ") else self.source


def note_of(agent_source: str) -> str:
    """The memory note of the agent whose note is ``agent_source`` (`Agents/Planner.md` →
    `Agents/Planner/Memory.md`: beside a custom agent's Log.md)."""
    return f"{agent_source.removesuffix('.md')}/{NOTE_NAME}"


def read(vault: Path, rel: str) -> tuple[list[Entry], list[str]]:
    """routine's entries in the note, and the person's own lines (in order); both empty when absent."""
    return _read(vault, rel)[:2]


def _read(vault: Path, rel: str) -> tuple[list[Entry], list[str], bytes | None]:
    try:
        note = load_note_text(vault / rel)
    except (OSError, UnicodeDecodeError):
        return [], [], None
    if note is None:
        return [], [], None
    entries, own = [], []
    for line in parse_frontmatter(note.text).body.splitlines():
        m = _ENTRY.match(line)
        if m:
            try:
                source = f"{m['note']}.md" if m["note"] else m["chat"]
                entries.append(Entry(date.fromisoformat(m["day"]), m["text"], m["key"], source))
                continue
            except ValueError:
                pass
        if line.strip() and not line.startswith("# ") and not line.startswith(INTRO.split("{")[0]):
            own.append(line)
    return entries, own, note.raw


def add(vault: Path, rel: str, title: str, agent: str, new: list[Entry]) -> bool:
    """Add ``new`` to the note (the person's lines and edits kept), newest first, at most
    ``MAX_ENTRIES`` of routine's; False when the person was saving the note just then (nothing
    written: the next run adds them)."""
    entries, own, before = _read(vault, rel)
    known = {e.key for e in entries}
    fresh = [e for e in new if e.key not in known]
    if not fresh:
        return True
    kept = sorted([*entries, *fresh], key=lambda e: (e.day, e.key), reverse=True)[:MAX_ENTRIES]
    body = "\n".join([f"# {title}'s memory", "", INTRO.format(title=title), "",
                      *(e.render() for e in kept), *([""] + own if own else [])])
    props = {"type": "agent-memory", "agent": agent, "tags": ["routine/memory"]}
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        atomic_write(path, join_frontmatter(props, "\n" + body + "\n"), expected=before)
    except NoteChanged:
        return False
    return True


def as_context(vault: Path, rel: str, readable: Callable[[str], bool]) -> str:
    """The note's lines for the agent's prompt: routine's entries whose source note the agent may
    read (``readable``: its reads as they are now), and the person's own lines."""
    entries, own = read(vault, rel)
    return "\n".join([*(e.render() for e in entries if e.note is None or readable(e.note)), *own])
