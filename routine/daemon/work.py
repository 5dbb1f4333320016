"""The one place where work waits: bounded concurrency, and a block never overlaps itself.

Workers block on a condition variable (no polling). Each item has a key (a block id, or the
agent of a manual fire); an item whose key is running stays queued until that run ends.

For the watchdog, a running item beats (``routine.runcontext.beat``: the runner does at each
step's start and end), and ``problems()`` says when the queue is wedged: an item silent for
longer than it may legitimately be, work waiting that no free worker takes, a dead worker.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Callable

from routine import runcontext
from routine.daemon.status_record import QueueSnapshot
from routine.host import sysmetrics

if TYPE_CHECKING:
    from routine.models.plan import ModelKey

log = logging.getLogger(__name__)


@dataclass
class Work:
    key: str
    label: str
    run: Callable[[], object] = lambda: None  # set once the job's closure can name the job (its result is dropped)
    queued_at: float = field(default_factory=time.monotonic)  # monotonic: for waits, not for display
    models: tuple[ModelKey, ...] = ()  # residency keys of the models this work will call (for the forecast)
    last_beat: float = 0.0  # monotonic; set when a worker takes it, and at each beat


class WorkQueue:
    def __init__(self, workers: int = 2, on_change: Callable[[], None] | None = None):
        self._cond = threading.Condition()
        self.on_change = on_change or (lambda: None)  # called (outside the lock) on submit and finish
        self._items: list[Work] = []
        self._running: dict[str, Work] = {}
        self._stopping = False
        self._threads = [threading.Thread(target=self._loop, name=f"worker-{i}", daemon=True) for i in range(workers)]
        self.last_progress = time.monotonic()  # for the watchdog: when a worker last took or finished work

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def submit(self, work: Work, coalesce: bool = False) -> bool:
        """Queue ``work``. With ``coalesce``, an item of the same key still waiting makes this
        one unnecessary (a note changed again before its trigger run began): False."""
        with self._cond:
            if self._stopping:
                raise RuntimeError("the daemon is stopping and takes no new work")
            if coalesce and any(w.key == work.key for w in self._items):
                return False
            self._items.append(work)
            self._cond.notify_all()
        self.on_change()
        return True

    def snapshot(self) -> QueueSnapshot:
        with self._cond:
            return QueueSnapshot(tuple(w.label for w in self._running.values()), tuple(w.label for w in self._items))

    def models(self) -> set[ModelKey]:
        """Models that queued or running work needs: to the model manager, needed now."""
        with self._cond:
            return {m for w in (*self._items, *self._running.values()) for m in w.models}

    def depth(self) -> tuple[int, int]:
        """(running, waiting)."""
        with self._cond:
            return len(self._running), len(self._items)

    def problems(self, silence_limit: float, stall_limit: float) -> list[str]:
        """Why the queue is wedged (empty when it is healthy).

        ``silence_limit``: the longest a running item may go without a beat. ``stall_limit``:
        the longest work may wait while a worker is free to take it.
        """
        now = time.monotonic()
        found = []
        with self._cond:
            if self._stopping:
                return []
            for w in self._running.values():
                silent = now - w.last_beat
                if silent > silence_limit:
                    found.append(
                        f"{w.label} has shown no progress for {silent:.0f}s (the most a step may take is "
                        f"{silence_limit:.0f}s)"
                    )
            runnable = [w for w in self._items if w.key not in self._running]
            if runnable and len(self._running) < len(self._threads) and now - self.last_progress > stall_limit:
                found.append(
                    f"{runnable[0].label} has waited {now - runnable[0].queued_at:.0f}s while a worker was free"
                )
        dead = [t.name for t in self._threads if t.ident is not None and not t.is_alive()]
        if dead:
            found.append(f"worker thread(s) {', '.join(dead)} died")
        return found

    def busy(self) -> bool:
        with self._cond:
            return bool(self._items or self._running)

    def stop(self, wait: float) -> bool:
        """Take no more work; wait up to ``wait`` seconds for running items. True if all ended."""
        with self._cond:
            self._stopping = True
            dropped = self._items
            self._items = []
            self._cond.notify_all()
        for w in dropped:
            log.info("not started before shutdown: %s", w.label)
        deadline = time.monotonic() + wait
        with self._cond:
            while self._running and time.monotonic() < deadline:
                self._cond.wait(timeout=max(0.0, deadline - time.monotonic()))
            return not self._running

    def _next(self) -> Work | None:
        for i, w in enumerate(self._items):
            if w.key not in self._running:
                return self._items.pop(i)
        return None

    def _loop(self) -> None:
        while True:
            with self._cond:
                work = self._next()
                while work is None:
                    if self._stopping:
                        return
                    self._cond.wait()
                    work = self._next()
                self._running[work.key] = work
                self.last_progress = work.last_beat = time.monotonic()
            started = time.monotonic()
            log.info("started %s (waited %.1fs)", work.label, started - work.queued_at)
            try:
                with runcontext.beating_to(partial(_beat, work)):
                    work.run()
                log.info("finished %s in %.1fs", work.label, time.monotonic() - started)
            except Exception:  # a bug in one run must not kill the worker
                log.exception("work %s crashed", work.label)
            finally:
                with self._cond:
                    self._running.pop(work.key, None)
                    self.last_progress = time.monotonic()
                    self._cond.notify_all()
                    idle = not self._running and not self._items
                if idle:  # the last run is done: its freed memory goes back to the box
                    sysmetrics.give_back_heap()
                try:
                    self.on_change()
                except Exception:
                    log.exception("work queue listener failed")


def _beat(work: Work) -> None:
    work.last_beat = time.monotonic()
