"""Background threads that cannot die silently.

Every long-lived thread of the daemon (publisher, watcher loops, index feed, preloader,
control socket, health monitor) is started through ``start``. If its loop raises, the
error is logged once (with its traceback the first time that error is seen), and the loop is
started again after a backoff (1 s, 2 s, 4 s … at most ``MAX_BACKOFF``). A loop that keeps
failing (``GIVE_UP`` crashes within ``WINDOW``) is left down and reported by ``problems()``:
the daemon's health check then fails, the watchdog stops pinging and systemd restarts the
whole daemon. A loop that returns normally has finished (a clean stop).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Callable

log = logging.getLogger(__name__)

FIRST_BACKOFF = 1.0
MAX_BACKOFF = 60.0
GIVE_UP = 5           # crashes within WINDOW seconds before the loop is left down
WINDOW = 600.0
BACKGROUND_NICE = 10  # background work (indexing) yields the CPU to model calls and the person's programs

_registry: dict[str, "Supervised"] = {}
_registry_lock = threading.Lock()
_listeners: list[Callable[[], None]] = []


def lower_priority() -> None:
    """Make the calling thread (and the threads it starts, an embedding model's) a background one."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
    except (AttributeError, OSError):  # not Linux, or not allowed: the work just runs at normal priority
        pass


class Supervised:
    def __init__(self, name: str, target: Callable[[], None], stop: threading.Event | None = None):
        self.name = name
        self.target = target
        self.stop_event = stop or threading.Event()
        self.crashes: list[float] = []  # monotonic times of recent crashes
        self.last_error: str | None = None
        self.gave_up = False
        self.restarts = 0
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        backoff = FIRST_BACKOFF
        while True:
            try:
                self.target()
                return  # a normal return is a clean stop
            except Exception as exc:
                if not self._crashed(exc):
                    return
            if self.stop_event.wait(backoff):
                return
            backoff = min(backoff * 2, MAX_BACKOFF)
            self.restarts += 1
            log.warning("restarting the %s thread (restart %d)", self.name, self.restarts)

    def _crashed(self, exc: Exception) -> bool:
        """Record a crash; False when the loop is left down."""
        now = time.monotonic()
        self.crashes = [t for t in self.crashes if now - t < WINDOW] + [now]
        error = f"{type(exc).__name__}: {exc}"
        if error != self.last_error:  # once per distinct error, not once per crash
            log.error("the %s thread failed: %s", self.name, error, exc_info=exc)
        self.last_error = error
        if len(self.crashes) >= GIVE_UP:
            self.gave_up = True
            log.error("the %s thread failed %d times in %.0f min; leaving it down (the daemon reports "
                      "itself unhealthy)", self.name, len(self.crashes), WINDOW / 60)
        _notify()
        return not self.gave_up and not self.stop_event.is_set()

    @property
    def alive(self) -> bool:
        return self.thread.is_alive()

    def problem(self) -> str | None:
        """Why this thread makes the daemon unhealthy (it was left down), else None."""
        if self.gave_up:
            return f"the {self.name} thread keeps failing and is down: {self.last_error}"
        return None

    def restarting(self) -> str | None:
        """A recent crash the thread is recovering from (degraded, not unhealthy), else None."""
        if not self.gave_up and self.crashes and time.monotonic() - self.crashes[-1] < WINDOW:
            return (f"the {self.name} thread failed {len(self.crashes)} time(s) recently "
                    f"and was restarted: {self.last_error}")
        return None


def start(name: str, target: Callable[[], None], stop: threading.Event | None = None) -> Supervised:
    """Run ``target`` in a supervised daemon thread named ``name``."""
    sup = Supervised(name, target, stop)
    with _registry_lock:
        _registry[name] = sup
    sup.thread.start()
    return sup


def _all() -> list[Supervised]:
    with _registry_lock:
        return list(_registry.values())


def problems() -> list[str]:
    """A sentence for each supervised thread left down after failing again and again."""
    return [p for s in _all() if (p := s.problem())]


def restarting() -> list[str]:
    """A sentence for each supervised thread that crashed recently and was restarted."""
    return [p for s in _all() if (p := s.restarting())]


def on_crash(listener: Callable[[], None]) -> None:
    """Call ``listener`` (no arguments) after any supervised thread crashes."""
    _listeners.append(listener)


def _notify() -> None:
    for listener in list(_listeners):
        try:
            listener()
        except Exception:  # a listener's bug must not hide the crash itself
            log.warning("a crash listener failed", exc_info=True)
