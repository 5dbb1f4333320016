"""An agent's memory at the start of its run: what it has learned since its last run is added to
its memory note (``routine.journal.lessons`` → ``routine.vault.agent_memory``), and the note is
given to it as context: when the window is full, kept after the step's inputs and the notes they link
to, before search hits (``Priority.MEMORY``)."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from routine.config.model import AgentSpec
from routine.journal import lessons
from routine.journal.keep import KeepRates
from routine.vault import agent_memory
from routine.vault.context_items import ContextItem, Priority
from routine.vault.outline import Section
from routine.vault.scope import in_scope

LABEL = "Your memory: what routine learned from your earlier runs and the person's corrections ({link})"


def learn(vault: Path, db: sqlite3.Connection, agent: AgentSpec, now: datetime) -> None:
    """Add to the agent's memory note what the journal shows since it last learned."""
    KeepRates(db).measure_due(vault, now)  # sections now 48 h old say what the person kept
    found = lessons.evidence(db, agent.name, lambda rel: in_scope(list(agent.reads), rel), now)
    if found and agent_memory.add(vault, agent_memory.note_of(agent.source), _title(agent), agent.name, found):
        lessons.learned(db, agent.name, found, now)


def recalled(vault: Path, agent: AgentSpec, order: int) -> list[ContextItem]:
    """The memory note as a piece of context (none while it holds nothing)."""
    rel = agent_memory.note_of(agent.source)
    text = agent_memory.as_context(vault, rel)
    if not text:
        return []
    label = LABEL.format(link=f"[[{rel.removesuffix('.md')}]]")
    return [ContextItem(label, Priority.MEMORY, [Section(None, 0, text)], rel, order)]


def _title(agent: AgentSpec) -> str:
    return Path(agent.source).stem or agent.name.title()
