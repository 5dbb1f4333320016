"""Preloading and idle unloading, on the daemon's own thread.

The schedule says which model each coming step needs and when. A model is loaded ahead of
its step by its lead time (learned from the load times the journal has seen), so the step
starts warm; the manager refuses a preload that would evict a model needed sooner. Models of
ours that nothing needs for ``ollama.idle_unload`` are unloaded, so an idle box is quiet.

The thread sleeps until the next preload or idle check (an Event wait, never a poll) and is
woken early by a reload or the end of a lease. ``run_due(now)`` is the whole decision, callable
without the thread (the benchmark drives it in simulated time).
"""

from __future__ import annotations

import logging
import statistics
import threading
from datetime import datetime, timedelta, timezone
from typing import Callable

from routine.causes import is_disk_full
from routine.config.model import Config
from routine.errors import ModelError
from routine.host import supervise
from routine.models.manager import ModelManager
from routine.models.plan import ModelKey, Use

log = logging.getLogger(__name__)

DEFAULT_LEAD = timedelta(minutes=2)   # before any load has been seen
MIN_LEAD, MAX_LEAD = timedelta(seconds=30), timedelta(minutes=15)
LOOKAHEAD = timedelta(hours=1)        # preloads are planned this far ahead
RETRY = timedelta(seconds=30)         # a refused preload is tried again this often until its step


def learned_lead(load_ms: list[int]) -> timedelta:
    """Twice the typical observed load, plus half a minute: loads vary (cold disk, busy GPU)."""
    if not load_ms:
        return DEFAULT_LEAD
    lead = timedelta(milliseconds=2 * statistics.median(load_ms)) + timedelta(seconds=30)
    return max(MIN_LEAD, min(MAX_LEAD, lead))


class Preloader:
    def __init__(self, manager: ModelManager, config_of: Callable[[], Config],
                 uses: Callable[[datetime, datetime], list[Use]],
                 lead_for: Callable[[ModelKey], timedelta], clock: Callable[[], datetime] | None = None) -> None:
        self.manager = manager
        self.config_of = config_of
        self.uses = uses
        self.lead_for = lead_for
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        # use (block, step, at) -> when a preload for it was last refused
        self._tried: dict[tuple[str | None, int, datetime], datetime] = {}
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_due(self, now: datetime) -> datetime:
        """Preload what is due, unload what is idle; returns when there is next something to do."""
        config = self.config_of()
        wake = [now + LOOKAHEAD]
        if config.preload:
            for use in self.uses(now, now + LOOKAHEAD):
                at = use.at - self.lead_for(use.model)
                key = (use.block, use.step, use.at)
                if at > now:
                    wake.append(at)
                    continue
                last = self._tried.get(key)
                if last is not None and now < last + RETRY:
                    wake.append(min(use.at, last + RETRY))
                    continue
                if not self._preload(config, use):
                    self._tried[key] = now
                    wake.append(min(use.at, now + RETRY))
        idle_check = self.manager.unload_idle()
        if idle_check is not None:
            wake.append(idle_check)
        self._tried = {k: t for k, t in self._tried.items() if k[2] > now}
        return max(min(wake), now + timedelta(seconds=1))

    def _preload(self, config: Config, use: Use) -> bool:
        alias = config.models.get(use.alias)
        if alias is None:
            return True
        if self.manager.is_resident(alias.primary):
            return True
        try:
            loaded = self.manager.preload(alias, alias.primary, needed_at=use.at)
        except ModelError as exc:
            log.warning("preload of %s for %s failed: %s", alias.name, use.block, exc.message)
            return True  # the step will load it itself and report the problem with the fix
        if loaded:
            log.info("preloaded %s for %s at %s", alias.name, use.block, use.at.isoformat(timespec="minutes"))
        return loaded

    # --- the thread ----------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = supervise.start("preloader", self._loop, self._stop).thread

    def poke(self) -> None:
        """Something changed (a reload, a lease ended): decide again now."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread:
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.is_set():
            now = self.clock()
            try:
                wake = self.run_due(now)
            except Exception as exc:  # a bad moment talking to Ollama must not end preloading for good
                log.error("preloader round failed: %s", exc, exc_info=not is_disk_full(exc))
                wake = now + RETRY
            self._wake.wait(timeout=max(1.0, (wake - self.clock()).total_seconds()))
            self._wake.clear()
