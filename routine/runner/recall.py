"""An agent's memory at the start of its run: what it has learned since its last run is added to
its memory note (``routine.journal.lessons`` → ``routine.vault.agent_memory``), and the note is
given to it as context: when the window is full, kept after the step's inputs and the notes they link
to, before search hits (``Priority.MEMORY``). A chat answered learns at once (``routine.chat``).

What an agent may learn from, and be given, is checked against its reads as the scope resolver made
them (``AgentSpec.may_read``); its own conversations in the chats folder count as read, since it was
in them. An entry whose source note it may not read is neither learned nor given.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from routine.config.model import AgentSpec
from routine.journal import lessons
from routine.journal.keep import KeepRates
from routine.vault import agent_memory
from routine.vault.agent_memory import Entry
from routine.vault.context_items import ContextItem, Priority
from routine.vault.outline import Section

LABEL = "Your memory: what routine learned from your earlier runs and the person's corrections ({link})"


def readable(agent: AgentSpec, chats: str) -> Callable[[str], bool]:
    """Whether ``agent`` may learn from, and be given an entry sourced by, a vault note: its reads
    (``may_read``, on a spec the scope resolver made), or a note in the chats folder ``chats``."""
    folder = chats.strip("/") + "/"
    return lambda rel: rel.startswith(folder) or agent.may_read(rel)


def learn(vault: Path, db: sqlite3.Connection, agent: AgentSpec, now: datetime, chats: str) -> list[Entry]:
    """Add to the agent's memory note what the journal shows since it last learned; what was added."""
    KeepRates(db).measure_due(vault, now)  # sections now 48 h old say what the person kept
    found = lessons.evidence(db, agent.name, readable(agent, chats), now)
    if found and agent_memory.add(vault, agent_memory.note_of(agent.source), _title(agent), agent.name, found):
        lessons.learned(db, agent.name, found, now)
        return found
    return []


def recalled(vault: Path, agent: AgentSpec, order: int, chats: str) -> list[ContextItem]:
    """The memory note as a piece of context (none while it holds nothing)."""
    rel = agent_memory.note_of(agent.source)
    text = agent_memory.as_context(vault, rel, readable(agent, chats))
    if not text:
        return []
    label = LABEL.format(link=f"[[{rel.removesuffix('.md')}]]")
    return [ContextItem(label, Priority.MEMORY, [Section(None, 0, text)], rel, order)]


def _title(agent: AgentSpec) -> str:
    return Path(agent.source).stem or agent.name.title()
