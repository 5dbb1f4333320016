"""The chromadb collection that holds the chunks' vectors: the only module importing chromadb.

We give chromadb our own vectors (no embedding function of its own, which would try to
download a model) and turn its telemetry off: nothing here reaches the network. chromadb is
the durable store of vectors, texts and metadata; ranking is exact, in ``vectors.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from routine.jsonvalue import Parsed

# A chunk's metadata as chromadb stores it (routine.memory.sync._metadata): path, heading, ordinal,
# mtime, sha, and its note's tags and links when it has any (chromadb takes no empty lists).
ChunkMetadata: TypeAlias = dict[str, str | int | float | list[str]]

if TYPE_CHECKING:
    import numpy as np

COLLECTION = "vault"


class DamagedStore(Exception):
    """The vector store answered in a way only a damaged one does."""


class ChromaStore:
    def __init__(self, folder: Path):
        self.folder = folder
        self._client: Any = None      # chromadb's client, once open (chromadb is imported only then)
        self._collection: Any = None

    @property
    def collection(self) -> Any:  # chromadb's Collection: its stubs are narrower than what it takes and gives
        if self._collection is None:
            self.open()
        return self._collection

    def open(self) -> None:
        import chromadb
        from chromadb.config import Settings

        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            self._client = chromadb.PersistentClient(path=str(self.folder),
                                                     settings=Settings(anonymized_telemetry=False, allow_reset=False))
        except Exception:
            _forget_systems()  # chromadb caches the half-made client of a failed open: the next try would reuse it
            raise
        self._collection = self._client.get_or_create_collection(
            COLLECTION, embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}})

    def close(self) -> None:
        try:
            if self._client is not None:
                self._client.close()
        except Exception:  # closing a damaged store fails in chromadb itself; forget it instead
            _forget_systems()
        self._client = self._collection = None

    def count(self) -> int:
        stored: int = self.collection.count()
        return stored

    def _batches(self, n: int) -> Iterator[tuple[int, int]]:
        size = max(1, min(self._client.get_max_batch_size() if self._client else 1000, 4000))
        return ((start, start + size) for start in range(0, n, size))

    def upsert(self, ids: list[str], vectors: list[list[float]], bodies: list[str],
               metadatas: list[ChunkMetadata]) -> None:
        col = self.collection
        for a, b in self._batches(len(ids)):
            col.upsert(ids=ids[a:b], embeddings=vectors[a:b], documents=bodies[a:b], metadatas=metadatas[a:b])

    def update_metadata(self, ids: list[str], metadatas: list[ChunkMetadata]) -> None:
        col = self.collection
        for a, b in self._batches(len(ids)):
            col.update(ids=ids[a:b], metadatas=metadatas[a:b])

    def delete(self, ids: list[str]) -> None:
        col = self.collection
        for a, b in self._batches(len(ids)):
            col.delete(ids=ids[a:b])

    def vectors_of(self, ids: list[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        got = self.collection.get(ids=ids, include=["embeddings"])
        return {i: [float(x) for x in v] for i, v in zip(got["ids"], got["embeddings"])}

    def all_vectors(self, page: int = 2000) -> tuple[list[str], list[str], np.ndarray, list[str]]:
        """(ids, paths, float32 matrix, texts) of every chunk, read a page at a time to keep memory low."""
        import numpy as np

        ids: list[str] = []
        paths: list[str] = []
        texts: list[str] = []
        blocks = []
        col = self.collection
        for offset in range(0, col.count(), page):
            got = col.get(include=["metadatas", "embeddings", "documents"], limit=page, offset=offset)
            ids += got["ids"]
            paths += [(m or {}).get("path", "") for m in got["metadatas"]]
            texts += [d or "" for d in got["documents"]]
            if len(got["ids"]):
                blocks.append(np.asarray(got["embeddings"], dtype=np.float32))
        return ids, paths, (np.concatenate(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)), texts

    def details(self, ids: list[str]) -> dict[str, tuple[str, Parsed]]:
        """id -> (text, metadata) of the chunks asked for that are stored."""
        if not ids:
            return {}
        got = self.collection.get(ids=ids, include=["documents", "metadatas"])
        return {i: (body or "", meta or {}) for i, body, meta in zip(got["ids"], got["documents"], got["metadatas"])}

    def all_ids(self) -> set[str]:
        return set(self.collection.get(include=[])["ids"])

    def self_check(self) -> str | None:
        """None when the collection answers sensibly; else what is wrong (for the log)."""
        count = self.count()
        if count == 0:
            return None
        sample = self.collection.get(limit=1, include=["embeddings"])
        if not sample["ids"]:
            return f"it counts {count} chunks but returns none"
        found = self.collection.query(query_embeddings=[sample["embeddings"][0]], n_results=1, include=["distances"])
        if not found["ids"][0] or found["distances"][0][0] > 1e-3:  # itself, or an identical twin
            return "its vector index does not find a stored chunk by its own vector"
        return None


def _forget_systems() -> None:
    from chromadb.api.shared_system_client import SharedSystemClient

    SharedSystemClient.clear_system_cache()
