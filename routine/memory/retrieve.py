"""Ranked notes for a query, only from an agent's ``reads`` scopes, one hit per note.

The scope filter is applied *before* the ranking is cut: only the chunks of notes the agent
may read are ranked (exactly, ``vectors.py``), so an out-of-scope note can neither appear nor
crowd an in-scope one out of the top k. Each hit is checked against the scopes once more,
and against the vault (a note deleted since it was indexed is not offered).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from routine.memory.store import DamagedStore
from routine.vault.scope import in_scope

SNIPPET_CHARS = 200


@dataclass
class Hit:
    path: str  # vault-relative, e.g. "Projects/Alpha.md"
    heading: str | None  # the section the text comes from; None for text before any heading
    score: float  # cosine similarity, 1 = same direction
    text: str  # the chunk's text

    @property
    def link(self) -> str:
        """``[[Projects/Alpha#Risks]]``: how an agent cites the hit."""
        target = self.path[:-3] if self.path.lower().endswith(".md") else self.path
        return f"[[{target}#{self.heading}]]" if self.heading else f"[[{target}]]"

    @property
    def snippet(self) -> str:
        flat = re.sub(r"\s+", " ", self.text).strip()
        return flat if len(flat) <= SNIPPET_CHARS else flat[:SNIPPET_CHARS - 1].rstrip() + "…"

    def as_dict(self) -> dict:
        return {**asdict(self), "score": round(self.score, 4), "link": self.link, "snippet": self.snippet}

    @classmethod
    def from_dict(cls, d: dict) -> "Hit":
        return cls(d["path"], d.get("heading"), float(d["score"]), d.get("text", ""))


def ranked_hits(index, query: str, k: int, reads: list[str] | None, exclude: set[str]) -> list[Hit]:
    """``index`` is an open VaultIndex; ``reads`` None means the whole vault (the person's own search)."""
    if k < 1 or not query.strip():
        return []
    indexed = index.manifest.indexed_paths()
    allowed = {p for p in indexed if p not in exclude and (reads is None or in_scope(reads, p))}
    if not allowed:
        return []
    vector = index.embedder.embed([query])[0]
    table = index.vectors()
    spare = 3  # a few more, for notes deleted since they were indexed
    best = table.best_per_note(vector, k + spare, None if len(allowed) == len(indexed) else allowed)
    details = index.store.details([chunk_id for chunk_id, _, _ in best])
    if len(details) < len(best):
        raise DamagedStore(f"holds {len(details)} of the {len(best)} chunks it ranked")
    hits = []
    for chunk_id, path, score in best:
        body, meta = details[chunk_id]
        if path in allowed and (reads is None or in_scope(reads, path)) and (index.vault / path).is_file():
            hits.append(Hit(path, meta.get("heading") or None, score, body))
    return hits[:k]
