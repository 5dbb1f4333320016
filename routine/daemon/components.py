"""The daemon's parts, started and stopped through one ordered list.

Each ``Component`` has a ``start``, a ``halt`` (phase 1 of a stop: take in no new work) and a
``stop`` (phase 2: release what it holds). ``Components.start`` starts them in order; if one
fails, those already started are stopped in reverse and ``StartFailed`` names the one that
failed. ``Components.stop`` runs every started part's ``halt`` in reverse start order, then
every ``stop`` in reverse start order; one that raises is logged and the others still run.
The daemon's own list, and so its start and stop order, is ``Daemon.components``
(``routine.daemon.app``); docs/source-code.md writes it down.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, TypeVar

from routine.errors import StartFailed

log = logging.getLogger(__name__)

T = TypeVar("T")


def _nothing() -> None:
    return None


def if_there(get: Callable[[], T | None], act: Callable[[T], object]) -> Callable[[], None]:
    """A halt or stop of a part made at start (``get`` gives it, or None if it never was)."""

    def call() -> None:
        part = get()
        if part is not None:
            act(part)

    return call


@dataclass(frozen=True)
class Component:
    name: str
    start: Callable[[], None]
    halt: Callable[[], None] = _nothing  # phase 1 of a stop: no new work
    stop: Callable[[], None] = _nothing  # phase 2: release what it holds


class Components:
    def __init__(self, parts: list[Component]):
        self.parts = parts
        self.started: list[Component] = []

    def start(self) -> None:
        for part in self.parts:
            try:
                part.start()
            except BaseException as exc:  # Ctrl-C too: what started is stopped again
                # One sentence for the person; the traceback only at debug level (ROUTINE_LOG_LEVEL=DEBUG).
                log.error("could not start the %s (%s); stopping what started before it", part.name, exc)
                log.debug("why the %s could not start", part.name, exc_info=True)
                self.stop()
                if isinstance(exc, Exception):
                    raise StartFailed(part.name, exc) from exc
                raise
            self.started.append(part)

    def stop(self) -> list[str]:
        """Halt, then stop, every started part in reverse start order. Returns the names of the
        parts whose halt or stop failed (each logged)."""
        failed: list[str] = []
        for phase in ("halt", "stop"):
            for part in reversed(self.started):
                try:
                    getattr(part, phase)()
                except Exception:
                    log.exception("stopping the %s failed (%s); stopping the others", part.name, phase)
                    failed.append(part.name)
        self.started = []
        return failed
