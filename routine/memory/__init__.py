"""Vault memory: the search index over the vault and retrieval for agents.

The only code that touches chromadb and embeddings. Every heavy import (chromadb, torch,
sentence-transformers) happens inside a function, so importing this package costs nothing.

- ``chunks``: a note cut along its headings (pure).
- ``embedder``: sentence-transformers (the shipped MiniLM by default) or Ollama's /api/embed;
  loaded lazily, released when idle.
- ``store``: the chromadb collection. ``manifest``: what was indexed from which note (SQLite).
- ``health``: is the index on disk fit to open (probed in a child process when in doubt).
- ``index``: ``VaultIndex``: open, reconcile, update_paths, rebuild, search.
- ``retrieve``: scope-filtered, per-note ranking; ``Hit`` with ``link`` ``[[Note#Heading]]``.
"""

from routine.memory.index import IndexStats, VaultIndex
from routine.memory.retrieve import Hit

__all__ = ["Hit", "IndexStats", "VaultIndex"]
