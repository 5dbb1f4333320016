"""The daemon's model side: one manager for every model call (scheduled, triggered, manual),
the preloader, and the forecast both use to know what is needed when.

The forecast puts queued and running work first (needed now), then the schedule's coming
steps (``routine.models.plan``), so eviction follows Belady's rule where the future is known
and least-recently-used where it is not (a manual fire, a trigger).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Callable, Iterable
from zoneinfo import ZoneInfo

from routine import paths
from routine.daemon.live import Live
from routine.daemon.status_record import ResidentModel
from routine.daemon.work import WorkQueue
from routine.journal import Journal
from routine.journal.model_events import ModelEvents
from routine.models.client import ModelClient
from routine.models.manager import ModelManager
from routine.models.plan import ModelKey, Use, alias_key, next_scheduled_use, upcoming_uses
from routine.models.preloader import Preloader, learned_lead
from routine.schedule import pause


class Residency:
    """``live``: the config in force (``daemon.live.Live``); ``queue``: the daemon's work queue
    (its jobs' models are needed now); ``clock``: now, in UTC."""

    def __init__(self, live: Live, queue: WorkQueue, clock: Callable[[], datetime]):
        self.live, self.queue, self.clock = live, queue, clock
        self.journal = Journal()  # a connection of its own: model events come from many threads
        self.events = ModelEvents(self.journal.db)
        config = live.config
        self.manager = ModelManager(config, events=self.events, forecast=self.forecast, clock=clock,
                                    managed=True)
        self.client = ModelClient(config, self.manager)
        self.preloader = Preloader(self.manager, lambda: self.live.config, self.scheduled_uses,
                                   self.lead_for, clock=clock)
        self.manager.on_release = self.preloader.poke

    def start(self) -> None:
        self.preloader.start()

    def stop(self) -> None:
        """At shutdown: no more preloads, and our models leave the box's memory."""
        self.preloader.stop()
        self.manager.shutdown()
        self.journal.close()

    def reconfigure(self) -> None:
        """After a reload: new aliases, limits and schedule take effect for the next decision."""
        config = self.live.config
        self.manager.config = self.client.config = config
        self.preloader.poke()

    # --- what is needed when ---------------------------------------------------------------------

    def scheduled_uses(self, start: datetime, end: datetime) -> list[Use]:
        live = self.live
        tz = ZoneInfo(live.config.zone_name())
        held = pause.held_slots(paths.state_dir(), live.config.holiday, tz)  # nothing loaded for a held slot
        return upcoming_uses(live.config, live.agents, live.schedules.blocks.values(), start, end, tz, held=held)

    def forecast(self, key: ModelKey, now: datetime) -> datetime | None:
        if key in self.queue.models():
            return now
        live = self.live
        return next_scheduled_use(live.config, live.agents, live.schedules.blocks.values(), key, now,
                                  ZoneInfo(live.config.zone_name()))

    def lead_for(self, key: ModelKey) -> timedelta:
        return learned_lead(self.events.load_durations_ms(*key))

    def annotate(self, found: tuple[ResidentModel, ...]) -> tuple[ResidentModel, ...]:
        """Ollama's resident models (``/api/ps``) with the manager's view: whose each is, in use."""
        mine = {(m["host"], m["model"]): m for m in self.manager.snapshot()}
        return tuple(replace(model, loaded_by="routine" if info and info["ours"] else "another client",
                             in_use=bool(info and info["in_use"]))
                     for model in found for info in (mine.get((model.host, model.name)),))

    def keys_for_agents(self, agent_names: Iterable[str]) -> tuple[ModelKey, ...]:
        live = self.live
        keys: list[ModelKey] = []
        for name in agent_names:
            agent = live.agents.get(name)
            key = alias_key(live.config, agent.model) if agent else None
            if key is not None and key not in keys:
                keys.append(key)
        return tuple(keys)
