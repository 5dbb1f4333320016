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
- ``worker``: the daemon's index in a process of its own that exits when idle; ``remote``:
  ``RemoteIndex``, the daemon's handle on it (the daemon imports no chromadb, numpy or torch).

The names below are imported on first use, so ``routine.memory.remote`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from routine.memory.index import VaultIndex
    from routine.memory.retrieve import Hit
    from routine.memory.sync import IndexStats

__all__ = ["Hit", "IndexStats", "VaultIndex"]

_HOMES = {"VaultIndex": "routine.memory.index", "Hit": "routine.memory.retrieve", "IndexStats": "routine.memory.sync"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'routine.memory' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_HOMES[name]), name)
