"""Is the daemon healthy? What the watchdog asks before each ping.

Healthy means: the scheduler thread runs, no supervised thread was left down, the control socket
is served, no lock of the scheduling path is stuck, and the work queue is not wedged. A worker legitimately spends
minutes in one model call, so "wedged" is measured against the longest a step may take
(``step_limit``, derived from the config): the model call with every retry and fallback,
plus a margin for reading context and writing the note.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol

from routine.config.model import Config
from routine.daemon.status_record import Health, HealthState
from routine.host import supervise

if TYPE_CHECKING:
    from routine.daemon.control import ControlServer
    from routine.daemon.live import Live
    from routine.daemon.monitor import Monitor
    from routine.daemon.timers import Timers
    from routine.daemon.work import WorkQueue

STEP_MARGIN_MIN = 10.0   # seconds of non-model work (context, write, journal) a step may take
QUEUE_STALL = 60.0       # seconds work may wait while a worker is free (it is taken at once)
LOCK_PROBE = 5.0         # seconds we wait for the scheduling lock before calling it stuck


def step_limit(config: Config) -> float:
    """The longest a running step may go without progress before the daemon counts as hung.

    Each attempt loads the model then chats, each bounded by ``request_timeout``; an alias
    makes ``retries + 1`` attempts with exponential backoff between them; a step tries its
    alias and then each fallback. With the defaults (600 s, 2 retries, one fallback) that is
    about two hours: generous on purpose, since a restart in the middle of a legitimate slow
    run loses that run.
    """
    per_attempt = 2 * config.request_timeout
    backoff: float = config.retry_backoff * (2 ** config.retries - 1)
    per_alias = (config.retries + 1) * per_attempt + backoff
    chain = max((1 + len(a.fallbacks) for a in config.models.values()), default=1)
    return chain * per_alias + max(STEP_MARGIN_MIN, config.request_timeout)


class Parts(Protocol):
    """What the check reads: the daemon's threads and the scheduling lock."""

    @property
    def stopping(self) -> threading.Event: ...
    @property
    def live(self) -> Live: ...
    @property
    def queue(self) -> WorkQueue: ...
    @property
    def timers(self) -> Timers | None: ...
    @property
    def control(self) -> ControlServer | None: ...
    @property
    def due_lock(self) -> threading.Lock: ...


def problems(parts: Parts) -> list[str]:
    """Every reason the daemon is not healthy now; empty when it is."""
    if parts.stopping.is_set():
        return []
    found: list[str] = []
    found += parts.queue.problems(step_limit(parts.live.config), QUEUE_STALL)
    timers = parts.timers
    if timers is not None and not timers.alive():
        found.append("the scheduler thread is not running")
    control = parts.control
    if control is not None and not control.alive():
        found.append("the control socket is not served")
    if not _acquirable(parts.due_lock):
        found.append(f"the scheduling lock has been held for more than {LOCK_PROBE:.0f}s")

    found += supervise.problems()  # a background thread that kept failing and was left down
    return found


def summary(monitor: Monitor | None, problems: list[str]) -> Health:
    """Health for status, STATUS=, the dashboard and the metrics: ``unhealthy`` (the watchdog
    stops pinging: a restart may help), ``degraded`` (a dependency is down: routine waits for it
    and recovers by itself), or ``ok``."""
    degraded = monitor.degraded() if monitor else []
    state = HealthState.UNHEALTHY if problems else HealthState.DEGRADED if degraded else HealthState.OK
    return Health(state, tuple(problems + degraded), tuple(monitor.checks) if monitor else ())


def _acquirable(lock: threading.Lock) -> bool:
    if lock.acquire(timeout=LOCK_PROBE):
        lock.release()
        return True
    return False
