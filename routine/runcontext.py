"""What the current thread is working on: the run id, block, agent and model of a run, for
every log line (``routine.host.logs``), and a progress beat for the daemon's watchdog.

Context variables, so each worker thread has its own: the runner opens a scope around a
step, and anything logged inside it (the runner, the model client, litellm) carries the
run's fields. Nothing heavy is imported here.

    with runcontext.scope(run="20261122-073000-3f9a", agent="strategist", model="ollama_chat/…"):
        log.info("…")          # carries ROUTINE_RUN, ROUTINE_AGENT, ROUTINE_MODEL
        runcontext.beat()      # tells the work queue this item is making progress
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from contextvars import ContextVar
from types import MappingProxyType
from typing import Callable, Iterator

FIELDS = ("run", "block", "agent", "model")

_fields: ContextVar[Mapping[str, object]] = ContextVar("routine_run_fields", default=MappingProxyType({}))
_beat: ContextVar[Callable[[], None] | None] = ContextVar("routine_beat", default=None)


@contextlib.contextmanager
def scope(**fields: str | None) -> Iterator[dict[str, object]]:
    """Add fields (run, block, agent, model) for the duration of the block; inner wins."""
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise TypeError(f"unknown run context field(s): {', '.join(sorted(unknown))}")
    merged = {**_fields.get(), **{k: v for k, v in fields.items() if v is not None}}
    token = _fields.set(merged)
    try:
        yield merged
    finally:
        _fields.reset(token)


def current() -> Mapping[str, object]:
    """The fields in force in this thread: {} outside any run."""
    return _fields.get()


@contextlib.contextmanager
def beating_to(callback: Callable[[], None]) -> Iterator[None]:
    """Route ``beat()`` calls made in this thread (inside the block) to ``callback``."""
    token = _beat.set(callback)
    try:
        yield
    finally:
        _beat.reset(token)


def beat() -> None:
    """Progress: a step started or ended. Cheap; a no-op outside the daemon's work queue."""
    callback = _beat.get()
    if callback is not None:
        callback()
