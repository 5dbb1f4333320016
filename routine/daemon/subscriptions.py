"""Who applies which reaction to a change of the vault: each part of the daemon subscribes a
callback to the reaction types it applies (``flows/reactions.py`` decides them), as APScheduler's
``EventBroker.subscribe(callback, event_types)`` does; ``vault_events`` publishes each reaction, in
order, to its subscribers. A callback that fails is logged and the others still run."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from routine.flows.reactions import Reaction

log = logging.getLogger("routine.daemon.vault_events")

R = TypeVar("R", bound=Reaction)


class Reactions:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: list[tuple[Callable[[Reaction], None], tuple[type[Reaction], ...]]] = []

    def subscribe(self, callback: Callable[[R], None], *kinds: type[R]) -> None:
        """``callback`` is handed every reaction of the types ``kinds``, in the order published."""
        with self._lock:
            self._subscribers.append((callback, kinds))  # type: ignore[arg-type]  # called with R's alone

    def publish(self, reaction: Reaction, about: str) -> None:
        """Hand ``reaction`` to its subscribers (``about``: the note, for the log)."""
        with self._lock:
            subscribers = [callback for callback, kinds in self._subscribers if isinstance(reaction, kinds)]
        for callback in subscribers:
            try:
                callback(reaction)
            except Exception:
                log.exception("applying %s to %s failed", type(reaction).__name__, about)
