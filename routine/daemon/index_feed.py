"""The search index follows the vault watcher: settled changes are batched and indexed on a
thread of their own, so the watcher never waits for an embedding model to load."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Callable

from routine.host import supervise
from routine.host.supervise import lower_priority

if TYPE_CHECKING:
    from routine.memory.remote import RemoteIndex
    from routine.watch.changes import Change

log = logging.getLogger(__name__)

BATCH_SECONDS = 0.1  # changes arriving together (a folder moved) are indexed in one pass
__all__ = ["BATCH_SECONDS", "IndexFeeder", "PathFeed", "lower_priority"]


class PathFeed:
    """A thread that follows the vault watcher: changed paths are collected under a condition and
    taken in batches by ``_loop`` (the subclass's). ``NAME`` names the supervised thread."""

    NAME = "feed"

    def __init__(self) -> None:
        self._pending: set[str] = set()
        self._cond = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = supervise.start(self.NAME, self._loop).thread

    def on_change(self, change: Change) -> None:
        with self._cond:
            self._pending.add(change.rel)
            if change.src:
                self._pending.add(change.src)
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread:
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        raise NotImplementedError


class IndexFeeder(PathFeed):
    NAME = "index-feed"

    def __init__(self, memory: Callable[[], RemoteIndex | None]):
        super().__init__()
        self.memory = memory  # asked at each batch: a reload may have replaced the index

    def _loop(self) -> None:
        lower_priority()
        while True:
            with self._cond:
                while not self._pending and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                self._cond.wait(BATCH_SECONDS)
                paths, self._pending = sorted(self._pending), set()
            memory = self.memory()
            if memory is None:
                continue
            try:
                stats = memory.update_paths(paths)
                log.debug("index followed %d change(s): %s", len(paths), stats)
            except Exception as exc:  # the next change or the start-up reconcile brings it level
                log.warning("the search index could not follow %s: %s", ", ".join(paths[:3]), exc)
