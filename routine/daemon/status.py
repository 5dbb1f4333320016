"""What `routine status` shows (and the dashboard, STATUS= and the metrics textfile are made
from): daemon state and health, queue, next fires, resident models, recent runs, open alerts.
``snapshot`` builds the one record (``routine.daemon.status_record.DaemonStatus``).
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Protocol
from zoneinfo import ZoneInfo

from routine import __version__, paths
from routine.daemon import clock, health
from routine.daemon.health import Parts
from routine.daemon.status_record import (
    DaemonState,
    DaemonStatus,
    NextFire,
    RecentRun,
    ResidentModel,
    SettledPath,
    Waiting,
    WatchMode,
    WatchState,
)
from routine.errors import RoutineError
from routine.host import sysmetrics
from routine.journal import Journal
from routine.journal.keep import KeepRates
from routine.journal.questions import Questions
from routine.models import providers
from routine.schedule import pause, timed_reminders
from routine.vault import read_note
from routine.vault.presence import vault_problem

if TYPE_CHECKING:
    from routine.config.model import Config
    from routine.daemon.live import Live
    from routine.daemon.monitor import Monitor
    from routine.daemon.publish import Publisher
    from routine.daemon.timers import Timers
    from routine.daemon.vault_events import VaultEvents
    from routine.journal.keep import KeepRate

RECENT_RUNS = 10
KEEP_DAYS = 7


class Sources(Parts, Protocol):
    """What the snapshot reads: the health check's parts, and those below."""

    @property
    def started_at(self) -> float: ...
    @property
    def monitor(self) -> Monitor: ...
    @property
    def publisher(self) -> Publisher: ...
    @property
    def vault_events(self) -> VaultEvents | None: ...
    def resident_models(self) -> tuple[tuple[ResidentModel, ...] | None, str | None]: ...


def snapshot(parts: Sources, health_problems: list[str] | None = None) -> DaemonStatus:
    problems = health.problems(parts) if health_problems is None else health_problems
    resident, models_error = parts.resident_models()
    config = parts.live.config
    missing = vault_problem(config.vault)  # not healthy, but no watchdog restart: waiting is the cure
    problems = [*problems, missing] if missing else problems
    started = datetime.fromtimestamp(parts.started_at, timezone.utc).replace(microsecond=0)
    return DaemonStatus(
        state=DaemonState.STOPPING if parts.stopping.is_set() else DaemonState.RUNNING,
        pid=os.getpid(),
        uptime_s=int(time.time() - parts.started_at),
        started_at=started,
        version=__version__,
        commit=sysmetrics.commit(),
        config=str(config.path),
        vault=str(config.vault),
        health=health.summary(parts.monitor, problems),
        queue=parts.queue.snapshot(),
        next_fires=next_fires(parts.timers, parts.live),
        resident_models=resident,
        models_error=models_error,
        recent_runs=recent_runs(),
        open_alerts=open_alerts(config),
        dashboard=parts.publisher.dashboard_state(),
        metrics_textfile=str(config.metrics_textfile) if config.metrics_textfile else None,
        vault_watch=_watch_state(parts.vault_events),
        paused=paused_now(config),
        reminders=reminders_waiting(config),
        keep_rates=keep_rates(),
        waiting=waiting(),
    )


def waiting() -> tuple[Waiting, ...]:
    """The questions that wait on the person (the daemon's status and `routine status` without one)."""
    journal = Journal()
    try:
        return tuple(Waiting(q.id, q.block, q.agent, q.question, q.choices, q.deadline, q.default, q.note)
                     for q in Questions(journal.db).open())
    finally:
        journal.close()


def reminders_waiting(config: Config) -> tuple[str, ...]:
    """The one-shot reminders still to fire (the daemon's status and `routine status` without one)."""
    return timed_reminders.waiting(ZoneInfo(config.zone_name()))


def paused_now(config: Config) -> tuple[str, ...]:
    """What a pause or a holiday holds now (the daemon's status and `routine status` without one)."""
    zone = ZoneInfo(config.zone_name())
    return pause.in_force(paths.state_dir(), config.holiday, clock.now().astimezone(zone), zone)


def next_fires(timers: Timers | None, live: Live) -> tuple[NextFire, ...]:
    fires = timers.next_fires() if timers else {}
    blocks = live.schedules.blocks
    zone = ZoneInfo(live.config.zone_name())
    held = pause.held_slots(paths.state_dir(), live.config.holiday, zone)
    rows = [NextFire(b, t, tuple(blocks[b].agents) if b in blocks else (), held(b, t)) for b, t in fires.items()]
    return tuple(sorted(rows, key=lambda f: f.at))


def recent_runs(limit: int = RECENT_RUNS) -> tuple[RecentRun, ...]:
    journal = Journal()
    try:
        return tuple(RecentRun.from_json(r.as_dict()) for r in journal.recent(limit))
    finally:
        journal.close()


def keep_rates(days: int = KEEP_DAYS) -> tuple[KeepRate, ...]:
    """The keep-rate per agent and per block of the sections written in the last ``days`` days."""
    journal = Journal()
    try:
        return tuple(KeepRates(journal.db).rates(datetime.now(timezone.utc) - timedelta(days=days)))
    finally:
        journal.close()


def open_alerts(config: Config) -> tuple[str, ...]:
    folder = config.vault / config.layout.alerts
    out = []
    for path in sorted(folder.glob("*.md"), reverse=True)[:200] if folder.is_dir() else []:
        rel = path.relative_to(config.vault).as_posix()
        try:
            if read_note(config.vault, rel).frontmatter.get("status", "open") == "open":
                out.append(rel)
        except (OSError, RoutineError):  # a pipe or a huge file named like an alert
            continue
    return tuple(out)


def _watch_state(vault_events: VaultEvents | None) -> WatchState:
    watcher = vault_events.watcher if vault_events else None
    if watcher is None:
        return WatchState(WatchMode.OFF)
    # What the last saves turned into (a change, routine's own write, unchanged): why a trigger
    # did or did not fire; and how many paths still wait to settle.
    recent = tuple(SettledPath(**s.as_dict()) for s in watcher.recent())
    owed = vault_events.graph_feed.owed if vault_events and vault_events.graph_feed else None
    if watcher.degraded:
        return WatchState(WatchMode.RECONCILE_ONLY, problem=watcher.degraded, pending=watcher.pending(),
                          reconciles=watcher.reconciles, recent=recent, canvases_owed=owed)
    return WatchState(WatchMode.INOTIFY, reconcile_every_s=int(watcher.reconcile_every), pending=watcher.pending(),
                      reconciles=watcher.reconciles, recent=recent, canvases_owed=owed)


def resident_models(config: Config) -> tuple[tuple[ResidentModel, ...] | None, str | None]:
    """Models loaded on every managed model server the config uses, from the server's own report;
    (None, why) when one cannot be asked."""
    found: list[ResidentModel] = []
    for host in config.managed_hosts:
        try:
            found += [ResidentModel(m.name, m.size, host, m.expires_at) for m in providers.resident(host, timeout=3)]
        except RoutineError as exc:
            return None, exc.message
    return tuple(found), None
