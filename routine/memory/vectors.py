"""Exact ranking: every chunk's vector in memory, one matrix product per query.

chromadb's HNSW graph is approximate, and measured on MiniLM vectors it missed a freshly
written note on an unusual topic (an outlier inserted last is poorly linked). A personal
vault holds tens of thousands of chunks at most: 14,000 chunks are 21 MB of float32 and a
query costs a couple of milliseconds, exactly. So chromadb stores the vectors, texts and
metadata durably, and ranking reads them into this table once (on the first search) and
keeps it current as the index writes. The table is dropped with the embedding model when
idle.

A table is never changed in place: a write makes a new one, so a search running meanwhile
ranks a consistent snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class VectorTable:
    ids: np.ndarray  # chunk ids (object array)
    paths: np.ndarray  # the note each chunk comes from (object array)
    matrix: np.ndarray  # float32, one unit-length row per chunk
    texts: np.ndarray  # each chunk's text, lowercased (object array): the keyword half of the ranking

    @classmethod
    def empty(cls) -> "VectorTable":
        return cls(np.array([], dtype=object), np.array([], dtype=object), np.zeros((0, 0), dtype=np.float32),
                   np.array([], dtype=object))

    @classmethod
    def of(cls, ids: list[str], paths: list[str], vectors: np.ndarray | list[list[float]],
           texts: list[str] | None = None) -> "VectorTable":
        if not ids:
            return cls.empty()
        lowered = [t.lower() for t in texts] if texts is not None else [""] * len(ids)
        return cls(
            np.array(ids, dtype=object),
            np.array(paths, dtype=object),
            _unit(np.asarray(vectors, dtype=np.float32)),
            np.array(lowered, dtype=object),
        )

    def containing(self, exact_words: list[str], allowed: set[str] | None) -> set[str]:
        """The notes (among ``allowed``) with a chunk holding every one of ``exact_words``."""
        if not exact_words:
            return set()
        return {p for p, t in zip(self.paths, self.texts)
                if (allowed is None or p in allowed) and all(w in t for w in exact_words)}

    def __len__(self) -> int:
        return len(self.ids)

    def changed(self, added: "VectorTable", removed: set[str]) -> "VectorTable":
        """A new table without ``removed`` and without the old rows of ``added``'s ids, plus ``added``."""
        gone = removed | set(added.ids.tolist())
        keep = np.fromiter((i not in gone for i in self.ids), dtype=bool, count=len(self.ids)) if gone else None
        parts = [
            self
            if keep is None
            else VectorTable(self.ids[keep], self.paths[keep], self.matrix[keep], self.texts[keep]),
            added,
        ]
        parts = [p for p in parts if len(p)]
        if not parts:
            return VectorTable.empty()
        return VectorTable(np.concatenate([p.ids for p in parts]), np.concatenate([p.paths for p in parts]),
                           np.concatenate([p.matrix for p in parts]), np.concatenate([p.texts for p in parts]))

    def best_per_note(self, vector: np.ndarray | list[float], k: int,
                      allowed: set[str] | None) -> list[tuple[str, str, float]]:
        """(chunk id, path, cosine similarity) of the best chunk of each of the ``k`` best notes,
        among the notes in ``allowed`` (all when None): the scope is applied before ranking."""
        if not len(self) or k < 1:
            return []
        query = _unit(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]
        scores = self.matrix @ query
        candidates = np.arange(len(self))
        if allowed is not None:
            candidates = np.flatnonzero(np.fromiter((p in allowed for p in self.paths), dtype=bool, count=len(self)))
        order = candidates[np.argsort(-scores[candidates], kind="stable")]
        best: dict[str, tuple[str, str, float]] = {}
        for row in order:
            path = self.paths[row]
            if path not in best:
                best[path] = (self.ids[row], path, float(scores[row]))
                if len(best) == k:
                    break
        return list(best.values())


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = matrix / norms
    return unit
