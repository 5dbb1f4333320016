"""Ranked notes for a query, only from an agent's ``reads`` scopes, one hit per note.

The scope filter is applied *before* the ranking is cut: only the chunks of notes the agent
may read are ranked (exactly, ``vectors.py``), so an out-of-scope note can neither appear nor
crowd an in-scope one out of the top k. Each hit is checked against the scopes once more,
and against the vault (a note deleted since it was indexed is not offered).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypedDict

from routine.jsonvalue import Parsed
from routine.memory.chunks import note_title
from routine.memory.keywords import exact_word, keyword_score, words
from routine.memory.store import DamagedStore
from routine.vault.provenance import is_routines_note
from routine.vault.scope import in_scope

if TYPE_CHECKING:
    from routine.memory.embedder import TextEmbedder
    from routine.memory.manifest import Manifest
    from routine.memory.store import ChromaStore
    from routine.memory.vectors import VectorTable

SNIPPET_CHARS = 200


class HitRecord(TypedDict):
    """A hit as JSON (`routine search --json`, the index worker's answer, a tool's result)."""

    path: str
    heading: str | None
    score: float
    text: str
    link: str
    snippet: str


@dataclass
class Hit:
    path: str  # vault-relative, e.g. "Projects/Alpha.md"
    heading: str | None  # the section the text comes from; None for text before any heading
    score: float  # cosine similarity (1 = same direction) plus keyword points (keywords.py)
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

    def as_dict(self) -> HitRecord:
        return {"path": self.path, "heading": self.heading, "score": round(self.score, 4), "text": self.text,
                "link": self.link, "snippet": self.snippet}

    @classmethod
    def from_dict(cls, d: Parsed) -> "Hit":  # a HitRecord, as read from the index worker
        return cls(d["path"], d.get("heading"), float(d["score"]), d.get("text", ""))


class SearchedIndex(Protocol):
    """What a search uses of the open index (``routine.memory.index.VaultIndex``, which imports this)."""

    vault: Path
    embedder: TextEmbedder

    @property
    def own_folders(self) -> tuple[str, ...]: ...
    @property
    def opened_manifest(self) -> Manifest: ...
    @property
    def opened_store(self) -> ChromaStore: ...
    def vectors(self) -> VectorTable: ...


def ranked_hits(index: SearchedIndex, query: str, k: int, reads: list[str] | None, exclude: set[str]) -> list[Hit]:
    """``index`` is an open VaultIndex; ``reads`` None means the whole vault (the person's own search),
    where routine's own notes (proposals, archived ones, alerts: ``routine.vault.provenance``)
    that make the cut come after every note of the person's.

    Hybrid: the vector ranking's candidates, and every note whose title shares a word with the
    query, are scored by cosine similarity plus keyword points (``keywords.py``). An agent's
    search (``reads`` given) leaves out routine's own folders (archived proposals, agent notes)
    unless its reads name them, routine's own notes always, and notes with no text: agents do not
    feed on routine's output."""
    if k < 1 or not query.strip():
        return []
    indexed = index.opened_manifest.indexed_paths()
    allowed = {p for p in indexed if p not in exclude and (reads is None or in_scope(reads, p))}
    if reads is not None:
        allowed = {p for p in allowed if not _own_folder(p, index.own_folders, reads) and not is_routines_note(p)}
    if not allowed:
        return []
    query_words = words(query)
    vector = index.embedder.embed([query])[0]
    table = index.vectors()
    spare = 3  # a few more, for notes deleted since they were indexed (and empty ones, for agents)
    narrowed = None if len(allowed) == len(indexed) else allowed
    best = {path: (chunk_id, score) for chunk_id, path, score in table.best_per_note(vector, 4 * k + spare, narrowed)}
    # Keyword candidates the vectors may have missed: a title word in common, or every exact word
    # (a date, a number, a name) in one chunk's text.
    titled = {p for p in allowed if set(query_words) & set(words(note_title(p)))}
    titled |= table.containing([w for w in query_words if exact_word(w)], allowed)
    titled -= set(best)
    if titled:
        best.update(
            {path: (chunk_id, score) for chunk_id, path, score in table.best_per_note(vector, len(titled), titled)}
        )
    details = index.opened_store.details([chunk_id for chunk_id, _ in best.values()])
    if len(details) < len(best):
        raise DamagedStore(f"holds {len(details)} of the {len(best)} chunks it ranked")
    hits, routines = [], set()
    for path, (chunk_id, score) in best.items():
        body, meta = details[chunk_id]
        if is_routines_note(path, meta.get("tags")):  # a proposal, an archived one, an alert
            if reads is not None:
                continue  # agents never feed on routine's own notes
            routines.add(path)
        if reads is not None and not body.strip():
            continue
        if path in allowed and (reads is None or in_scope(reads, path)) and (index.vault / path).is_file():
            hybrid = score + keyword_score(query_words, note_title(path), body)
            hits.append(Hit(path, meta.get("heading") or None, hybrid, body))
    hits.sort(key=lambda h: -h.score)
    return sorted(hits[:k], key=lambda h: h.path in routines)  # the person's notes before routine's copies


NEAR_TOP = 0.5  # a better match outside an agent's reads scores at least this share of the best one


def better_outside(mine: list[HitRecord], everyone: list[HitRecord], reads: list[str], own_folders: Iterable[str],
                   k: int) -> list[str]:
    """The notes of the whole vault's ``k`` best (``everyone``, hits as dicts) that rank above the
    agent's best hit, are real matches (at least ``NEAR_TOP`` of the top score: not the faint
    likeness every note has), and lie outside its ``reads`` — not routine's own folders, which an
    agent's search skips on purpose: what its `reads:` hid from it."""
    if not everyone:
        return []
    floor = max(max((hit["score"] for hit in mine), default=float("-inf")), NEAR_TOP * everyone[0]["score"])
    return [hit["path"] for hit in everyone[:k] if hit["score"] > floor and not in_scope(reads, hit["path"])
            and not _own_folder(hit["path"], own_folders, reads)]


def outside_sentence(agent: str, paths: list[str]) -> str:
    """'2 better matches are outside research's reads: Papers/.'"""
    folders = list(dict.fromkeys(path.split("/", 1)[0] + "/" if "/" in path else path for path in paths))
    many = len(paths) != 1
    return (f"{len(paths)} better match{'es are' if many else ' is'} outside {agent}'s reads: "
            f"{', '.join(folders)} (add it to `reads:` in the agent's note to let it see {'them' if many else 'it'}).")


def _own_folder(path: str, folders: Iterable[str], reads: list[str]) -> bool:
    """In routine's own folders (Archive/, Agents/), which the agent's reads do not name."""
    for folder in folders:
        if path.startswith(folder.rstrip("/") + "/") and not any(r.startswith(folder.rstrip("/") + "/") for r in reads):
            return True
    return False
