"""Where a step or a tool gets the graph: the daemon's live one when this process is the daemon,
else the cache brought level with the vault and the journal now."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from routine.graph.cache import open_current

if TYPE_CHECKING:
    from routine.config.model import Config
    from routine.graph.cache import GraphCache
    from routine.graph.graph import KnowledgeGraph

_live: GraphCache | None = None  # the daemon's GraphCache (routine.daemon.graph_feed sets it)


def set_live(cache: GraphCache | None) -> None:
    global _live
    _live = cache


def graph_for(config: Config) -> KnowledgeGraph:
    """The KnowledgeGraph of ``config``'s vault."""
    live = _live
    if live is not None and Path(live.vault) == Path(config.vault):
        return live.graph

    cache = open_current(config)
    cache.close()
    return cache.graph
