"""The knowledge graph follows the vault watcher and finished runs: settled changes are batched
and applied one note at a time on a thread of its own, then the canvases that changed are
written. Routine's own note writes reach it through the run journal (the watcher keeps quiet
about them), and so do what each run read and wrote."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Callable

from routine.causes import is_disk_full
from routine.daemon.index_feed import BATCH_SECONDS, PathFeed, lower_priority
from routine.graph import service
from routine.graph.cache import GraphCache
from routine.graph.publish import CanvasWriter
from routine.journal import Journal

CANVAS_SECONDS = 3.0  # canvases are laid out again at most this often: a burst of runs is one layout
CANVAS_SHARE = 0.1  # and the redraws take at most this share of a core (a big layout waits longer)
FULL_RETRY = 60.0  # seconds between attempts to open the graph cache while the state disk is full

log = logging.getLogger(__name__)



class GraphFeeder(PathFeed):
    NAME = "graph-feed"

    def __init__(self, vault: Callable[[], Path], on_blocked: Callable[[str, str], None]):
        super().__init__()
        self.vault = vault  # the vault of the config in force (a reload may move it)
        self.on_blocked = on_blocked  # (canvas, sentence): a canvas whose place is taken, alerted by the daemon
        self.cache: GraphCache | None = None     # once started
        self.writer: CanvasWriter | None = None
        self.refreshes = 0     # passes that brought graph and canvases up to date (status, tests)
        self._runs = True      # read the journal on the first pass
        self._canvases_next = float("-inf")  # when the canvases may be laid out again (monotonic)
        self._owed: float | None = None  # when the canvases owed since then are due (monotonic); None: level
        self._passing = False  # a batch taken and not yet applied

    @property
    def owed(self) -> bool:
        """Are there changes the canvases do not show yet: waiting to be taken, being applied, or
        applied to the graph while the canvases wait for a burst to end? (False: the canvases are level.)"""
        with self._cond:
            return bool(self._pending) or self._runs or self._passing or self._owed is not None

    def runs_finished(self) -> None:
        with self._cond:
            self._runs = True
            self._cond.notify()

    def stop(self) -> None:
        super().stop()

        service.set_live(None)
        if self.cache is not None:
            self.cache.close()

    def _open(self) -> None:
        vault = self.vault()
        self.cache = GraphCache(vault)
        stats = self.cache.reconcile()
        self.writer = CanvasWriter(vault, on_blocked=self.on_blocked)
        service.set_live(self.cache)
        log.info("knowledge graph ready: %d notes (%d read) in %.2fs", stats.notes, stats.parsed, stats.seconds)

    def _loop(self) -> None:
        lower_priority()
        while True:
            try:
                self._open()
                break
            except Exception as exc:
                if self._stopping:  # stop closed the cache under a long first pass: nothing is wrong
                    log.info("the knowledge graph stopped before it was ready (%s)", exc)
                    return
                if not is_disk_full(exc):
                    log.exception("the knowledge graph could not be opened; canvases are not kept current")
                    return
                # A full state disk: said in one line (the monitor raises the alert); try again later.
                log.error("the knowledge graph could not be opened: %s; trying again in %.0fs", exc, FULL_RETRY)
            with self._cond:
                if not self._stopping:
                    self._cond.wait(FULL_RETRY)
                if self._stopping:
                    return
        while True:
            with self._cond:
                while not self._pending and not self._runs and not self._stopping and not self._canvases_due():
                    self._cond.wait(None if self._owed is None else max(0.0, self._owed - time.monotonic()))
                if self._stopping:
                    return
                if self._pending or self._runs:
                    self._cond.wait(BATCH_SECONDS)
                paths, self._pending = sorted(self._pending), set()
                runs, self._runs = self._runs, False
                self._passing = True
            try:
                self._pass(paths, runs)
            except Exception as exc:  # the next change or the next start brings it level
                if self._stopping:
                    return
                log.error("the knowledge graph could not follow %s: %s", ", ".join(paths[:3]) or "the journal", exc,
                          exc_info=not is_disk_full(exc))
            finally:
                with self._cond:
                    self._passing = False

    def _canvases_due(self) -> bool:
        return self._owed is not None and time.monotonic() >= self._owed

    def _pass(self, paths: list[str], runs: bool) -> None:
        if self.cache is None or self.vault() != self.cache.vault:  # a reload moved the vault
            if self.cache is not None:
                self.cache.close()
            self._open()
            runs = True
        cache, writer = self.cache, self.writer
        assert cache is not None and writer is not None, "_open sets both"
        if paths:
            cache.update_paths(paths)
        if runs:
            journal = Journal()
            try:
                cache.follow_journal(journal)
            finally:
                journal.close()
        now = time.monotonic()
        if now < self._canvases_next:  # another change of the same burst: the layout waits for its end
            self._owed = self._canvases_next
            return
        self._owed = None
        cpu = time.thread_time()
        written = writer.refresh(cache.graph)
        self._canvases_next = next_canvases(now, time.thread_time() - cpu)
        self.refreshes += 1
        if written:
            log.info("graph canvases updated: %s", ", ".join(written))


def next_canvases(started: float, took: float) -> float:
    """When canvases may be laid out again after a redraw that started at ``started`` and took
    ``took`` seconds of CPU: a burst of changes is one redraw (``CANVAS_SECONDS``), and redrawing
    never takes more than ``CANVAS_SHARE`` of a core (a redraw of 2 s waits 20 s for the next; on
    a box whose runs are minutes apart, every run's changes are drawn as soon as it ends). CPU, not
    wall time: a redraw slowed by a busy box used no more of it, and is not made to wait longer."""
    return started + max(CANVAS_SECONDS, took / CANVAS_SHARE)
