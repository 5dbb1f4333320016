"""A piece of what a model is shown: a labelled, prioritised part of the vault (its sections,
properties and source), the unit the token budget keeps or drops. Made by the runner's
gatherer (``routine.runner.context``), the knowledge graph's ``graph:`` key
(``routine.graph.context``) and chats; fitted by ``routine.runner.budget``."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import TypedDict

from routine.vault.outline import Section


class Priority(IntEnum):
    """Drop order under the token budget: the lowest goes first."""

    SEARCH = 1     # found by meaning
    MEMORY = 2     # the agent's memory note (routine.runner.recall): background, after what the step asks for
    OLDER = 3      # notes a glob matched or an input links to
    INPUT = 4      # the step's declared inputs
    GROUNDING = 5  # the agent's always-there notes (OKRs, Project Map)
    TARGET = 6     # the note being written: its current draft
    STEP = 7       # earlier steps' outputs in this block: the handoff


@dataclass
class ContextItem:
    label: str  # shown to the model as the heading of this piece of context
    priority: Priority
    sections: list[Section]
    source: str | None = None  # vault-relative path, for provenance and citations
    order: int = 0
    properties: str = ""
    scores: list[float] = field(default_factory=list)  # per section: higher is kept first
    removed: list[str] = field(default_factory=list)   # sections left out as duplicates, said to the model

    def render(self, keep: list[int] | None = None) -> str:
        """The text the model sees: properties, then the kept sections in document order."""
        chosen = [s for i, s in enumerate(self.sections) if keep is None or i in keep]
        parts = [f"Properties: {self.properties}"] if self.properties else []
        parts += [s.render() for s in chosen if s.render()]
        return "\n\n".join(parts).strip()

    @property
    def text(self) -> str:
        return self.render()


class Dropped(TypedDict):
    """A piece left out under the budget, as the model is told and the run (or chat) journals it."""

    label: str
    source: str | None
    reason: str
