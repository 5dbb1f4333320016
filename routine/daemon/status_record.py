"""The daemon's status, typed: one ``DaemonStatus`` for `routine status` (with or without a
daemon), the dashboard, ``STATUS=`` and the metrics textfile.

Built in one place (``routine.daemon.status.snapshot``; without a daemon, `routine status`
fills what it can know). On the control socket it is one JSON object: ``to_json`` and
``from_json`` are the one conversion, at that edge; the JSON's keys and their order are what
`routine status --json` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, tzinfo
from enum import Enum
from typing import Any

from routine.daemon.dependencies import Check
from routine.journal.keep import KeepRate
from routine.journal.status import RunStatus
from routine.schedule.pause import held_note

RUN_FIELDS = ("id", "kind", "status", "block", "agent", "trigger", "model", "started_at", "ended_at",
              "duration_ms", "error", "wrote")


class DaemonState(str, Enum):
    RUNNING = "running"
    STOPPING = "stopping"            # SIGTERM came: no new work
    STOPPED = "stopped"              # what the dashboard says after a clean stop
    NOT_RUNNING = "not running"      # `routine status` found no daemon
    NOT_ANSWERING = "not answering"  # a daemon is there but did not answer

    def __str__(self) -> str:
        return self.value


class HealthState(str, Enum):
    OK = "ok"
    DEGRADED = "degraded"    # a dependency is down: routine waits for it and recovers by itself
    UNHEALTHY = "unhealthy"  # the watchdog stops pinging: a restart may help

    def __str__(self) -> str:
        return self.value


class WatchMode(str, Enum):
    OFF = "off"
    RECONCILE_ONLY = "reconcile only"
    INOTIFY = "inotify"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Health:
    state: HealthState
    problems: tuple[str, ...] = ()
    checks: tuple[Check, ...] = ()

    @property
    def ok(self) -> bool:
        return self.state is HealthState.OK

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "state": self.state.value, "problems": list(self.problems),
                "checks": [c.as_dict() for c in self.checks]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Health:
        state = d.get("state") or ("ok" if d.get("ok", True) else "unhealthy")
        return cls(HealthState(state), tuple(d.get("problems") or ()),
                   tuple(Check(c["name"], c["target"], c["ok"], c.get("detail", "")) for c in d.get("checks") or ()))


@dataclass(frozen=True)
class QueueSnapshot:
    """The work queue's labels: running now, and waiting in order."""

    running: tuple[str, ...] = ()
    queued: tuple[str, ...] = ()

    def ahead(self) -> int:
        """How many jobs are ahead of the last one queued."""
        return len(self.running) + len(self.queued) - 1

    def to_json(self) -> dict[str, Any]:
        return {"running": list(self.running), "queued": list(self.queued)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> QueueSnapshot:
        return cls(tuple(d.get("running") or ()), tuple(d.get("queued") or ()))


@dataclass(frozen=True)
class NextFire:
    block: str
    at: datetime
    agents: tuple[str, ...] = ()
    held: str | None = None  # why it will not run (paused, a holiday): `schedule.pause.reason`

    def to_json(self) -> dict[str, Any]:
        return {"block": self.block, "at": self.at.isoformat(), "agents": list(self.agents), "held": self.held}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> NextFire:
        return cls(d["block"], datetime.fromisoformat(d["at"]), tuple(d.get("agents") or ()), d.get("held"))

    @property
    def held_note(self) -> str:
        """`held: the schedule is paused until …`, or empty: how a listing says it will not run."""
        return held_note(self.held)


@dataclass(frozen=True)
class ResidentModel:
    """A model loaded in an Ollama (its /api/ps); in the daemon, with the model manager's view."""

    name: str
    size: int
    host: str
    expires_at: str | None = None
    loaded_by: str | None = None  # routine | another client (the daemon's model manager knows)
    in_use: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return _without_none(_as_dict(self), ("loaded_by", "in_use"))

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ResidentModel:
        return cls(**_known(cls, d))


@dataclass(frozen=True)
class RecentRun:
    """A run as `routine status` lists it (``RUN_FIELDS`` of the journal's ``RunRecord``)."""

    id: str
    kind: str
    status: RunStatus
    block: str | None
    agent: str | None
    trigger: str
    model: str | None
    started_at: str
    ended_at: str | None
    duration_ms: int | None
    error: str | None
    wrote: Any

    def to_json(self) -> dict[str, Any]:
        return {**_as_dict(self), "status": self.status.value}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RecentRun:
        return cls(**{**_known(cls, d), "status": RunStatus(d["status"])})


@dataclass(frozen=True)
class DashboardState:
    path: str
    checked: str | None = None  # when the publisher last looked at it (ISO, milliseconds)
    updated: str | None = None  # when it last rewrote it

    def to_json(self) -> dict[str, Any]:
        return _as_dict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> DashboardState:
        return cls(**_known(cls, d))


@dataclass(frozen=True)
class SettledPath:
    """A path the watcher settled lately and what it turned out to be (a change's kind, or
    routine's own write, unchanged, gone, unreadable): why a save did or did not fire a trigger."""

    path: str
    outcome: str
    at: float  # time.time()

    def to_json(self) -> dict[str, Any]:
        return _as_dict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SettledPath:
        return cls(**_known(cls, d))


@dataclass(frozen=True)
class WatchState:
    mode: WatchMode
    problem: str | None = None            # reconcile only: why inotify is not used
    reconcile_every_s: int | None = None  # inotify: the full look that backs it up
    pending: int | None = None            # paths still waiting to settle (None: no watcher)
    reconciles: int | None = None         # full looks finished
    recent: tuple[SettledPath, ...] | None = None
    canvases_owed: bool | None = None     # the graph's canvases wait for a burst of changes to end

    def to_json(self) -> dict[str, Any]:
        d = {**_as_dict(self), "mode": self.mode.value,
             "recent": None if self.recent is None else [s.to_json() for s in self.recent]}
        return _without_none(d, ("problem", "reconcile_every_s", "pending", "reconciles", "recent", "canvases_owed"))

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> WatchState:
        recent = d.get("recent")
        return cls(**{**_known(cls, d), "mode": WatchMode(d["mode"]),
                      "recent": None if recent is None else tuple(SettledPath.from_json(s) for s in recent)})


@dataclass(frozen=True)
class Waiting:
    """A question a block's step asked, still waiting on the person (``journal.questions``)."""

    id: str
    block: str
    agent: str
    question: str
    choices: tuple[str, ...]
    deadline: datetime
    default: str | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {**_as_dict(self), "choices": list(self.choices), "deadline": self.deadline.isoformat()}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Waiting:
        return cls(**{**_known(cls, d), "choices": tuple(d.get("choices") or ()),
                      "deadline": datetime.fromisoformat(d["deadline"])})

    def line(self, tz: tzinfo | None = None) -> str:
        """`q-7f3a9c planner asks "…" [a / b] until 15:00, then 'a'`: how status and the dashboard say it."""
        choices = f" [{' / '.join(self.choices)}]" if self.choices else ""
        then = f"then {self.default!r}" if self.default else "then skipped"
        return (f"{self.id} {self.agent} ({self.block}) asks \"{self.question}\"{choices} until "
                f"{self.deadline.astimezone(tz):%a %H:%M}, {then}")


@dataclass(frozen=True)
class DaemonStatus:
    """Fields in the order `routine status --json` prints them. Without a daemon only ``state``,
    ``recent_runs``, ``next_fires``, ``open_alerts`` and the models are known; the rest is None."""

    state: DaemonState
    pid: int | None = None
    uptime_s: int | None = None
    started_at: datetime | None = None
    version: str | None = None
    commit: str | None = None
    config: str | None = None
    vault: str | None = None
    health: Health | None = None
    queue: QueueSnapshot | None = None
    next_fires: tuple[NextFire, ...] = ()
    resident_models: tuple[ResidentModel, ...] | None = None  # None: Ollama not asked, or could not be
    models_error: str | None = None
    recent_runs: tuple[RecentRun, ...] = ()
    open_alerts: tuple[str, ...] = ()
    dashboard: DashboardState | None = None
    metrics_textfile: str | None = None
    vault_watch: WatchState | None = None
    paused: tuple[str, ...] = ()  # what a pause or a holiday holds now (`schedule.pause.in_force`)
    reminders: tuple[str, ...] = ()  # one-shot reminders still to fire, soonest first (`schedule.timed_reminders`)
    keep_rates: tuple[KeepRate, ...] = ()  # per agent and per block, the last KEEP_DAYS days (`journal.keep`)
    waiting: tuple[Waiting, ...] = ()  # questions agents asked the person, still open (issue 45)
    service_gaps: tuple[str, ...] = ()  # hosts routine.yaml names that the installed unit does not let through
    config_error: str | None = None  # no daemon and the config does not load (in the JSON only when set)
    error: str | None = None  # a daemon that did not answer: why (in the JSON only when set)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "state": self.state.value, "pid": self.pid, "uptime_s": self.uptime_s,
            "started_at": self.started_at.isoformat(timespec="seconds") if self.started_at else None,
            "version": self.version, "commit": self.commit, "config": self.config, "vault": self.vault,
            "health": self.health.to_json() if self.health else None,
            "queue": self.queue.to_json() if self.queue else None,
            "next_fires": [f.to_json() for f in self.next_fires],
            "resident_models": None if self.resident_models is None else [m.to_json() for m in self.resident_models],
            "models_error": self.models_error,
            "recent_runs": [r.to_json() for r in self.recent_runs],
            "open_alerts": list(self.open_alerts),
            "dashboard": self.dashboard.to_json() if self.dashboard else None,
            "metrics_textfile": self.metrics_textfile,
            "vault_watch": self.vault_watch.to_json() if self.vault_watch else None,
            "paused": list(self.paused),
            "reminders": list(self.reminders),
            "keep_rates": [k.to_json() for k in self.keep_rates],
            "waiting": [w.to_json() for w in self.waiting],
            "service_gaps": list(self.service_gaps),
            "config_error": self.config_error, "error": self.error,
        }
        return _without_none(out, ("config_error", "error"))

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> DaemonStatus:
        """The control socket's ``status`` back into its record (keys this version does not know
        are left out)."""
        resident = d.get("resident_models")
        return cls(**{
            **_known(cls, d),
            "state": DaemonState(d["state"]),
            "started_at": datetime.fromisoformat(d["started_at"]) if d.get("started_at") else None,
            "health": Health.from_json(d["health"]) if d.get("health") else None,
            "queue": QueueSnapshot.from_json(d["queue"]) if d.get("queue") is not None else None,
            "next_fires": tuple(NextFire.from_json(f) for f in d.get("next_fires") or ()),
            "resident_models": None if resident is None else tuple(ResidentModel.from_json(m) for m in resident),
            "recent_runs": tuple(RecentRun.from_json(r) for r in d.get("recent_runs") or ()),
            "open_alerts": tuple(d.get("open_alerts") or ()),
            "paused": tuple(d.get("paused") or ()),
            "reminders": tuple(d.get("reminders") or ()),
            "keep_rates": tuple(KeepRate.from_json(k) for k in d.get("keep_rates") or ()),
            "waiting": tuple(Waiting.from_json(w) for w in d.get("waiting") or ()),
            "service_gaps": tuple(d.get("service_gaps") or ()),
            "dashboard": DashboardState.from_json(d["dashboard"]) if d.get("dashboard") else None,
            "vault_watch": WatchState.from_json(d["vault_watch"]) if d.get("vault_watch") else None,
        })


def _as_dict(record: Any) -> dict[str, Any]:
    """A flat record's fields, in order (``dataclasses.asdict`` would deep-copy ``wrote``)."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


def _known(cls: Any, d: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in d.items() if k in names}


def _without_none(d: dict[str, Any], optional: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if not (k in optional and v is None)}


def status_line(snap: DaemonStatus, tz: tzinfo | None = None) -> str:
    """The one line `systemctl status` shows (STATUS=): next fire, resident models, queue."""
    parts = []
    if snap.health is not None and snap.health.state is HealthState.DEGRADED:
        parts.append("degraded: " + "; ".join(snap.health.problems))
    if snap.next_fires:
        first = snap.next_fires[0]
        parts.append(f"next {first.block} {first.at.astimezone(tz):%a %H:%M}")
    else:
        parts.append("nothing scheduled")
    resident = snap.resident_models
    if resident is None:
        parts.append("Ollama not reachable")
    else:
        parts.append("models: " + (", ".join(m.name for m in resident) if resident else "none loaded"))
    queue = snap.queue
    if queue is not None and (queue.running or queue.queued):
        parts.append(f"{len(queue.running)} running, {len(queue.queued)} waiting")
    alerts = len(snap.open_alerts)
    if alerts:
        parts.append(f"{alerts} open alert{'s' if alerts != 1 else ''}")
    return "; ".join(parts)
