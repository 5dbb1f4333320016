"""The model-load plan: which model the coming steps need and when, and what a policy costs.

Pure functions over the schedule: no Ollama, no clock of their own. Used three ways:
- the live manager (``routine.models.manager``) asks ``Forecast.next_use`` to pick an
  eviction victim (Belady: the model needed farthest in the future) and when to preload;
- ``routine models plan`` prints the coming day under our policy and under Ollama's own;
- ``bench/residency.py`` compares both with the Belady lower bound for the same requests.

A model is identified by its residency key ``(host, name as Ollama knows it)``: two aliases
naming the same model on one host share one resident copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Protocol
from zoneinfo import ZoneInfo

from routine.config.model import AgentSpec, Config, Deployment, StepSpec

ModelKey = tuple[str, str]  # (host, model name as Ollama knows it)

# How long a step is assumed to take when placing a block's later steps in time.
STEP_ESTIMATE = timedelta(minutes=2)
# A model just used is never unloaded as idle sooner than this (a person often fires again).
IDLE_GRACE = timedelta(minutes=5)
# Ollama's default keep_alive: an idle model goes after five minutes.
OLLAMA_KEEP_ALIVE = timedelta(minutes=5)


def model_key(dep: Deployment) -> ModelKey:
    return (dep.api_base, dep.served_name)


def key_label(key: ModelKey) -> str:
    return key[1]


@dataclass(frozen=True)
class Use:
    """One step's need for a model at a time: scheduled, or (in the benchmark) manual/trigger."""

    at: datetime
    model: ModelKey
    alias: str
    agent: str
    block: str | None = None
    step: int = 0
    kind: str = "schedule"  # schedule | manual | trigger


def alias_key(config: Config, alias_name: str) -> ModelKey | None:
    alias = config.models.get(alias_name)
    if alias is None or not alias.primary.provider.manages_residency:
        return None  # a server without residency (OpenAI-compatible): nothing to plan
    return model_key(alias.primary)


class _Cron(Protocol):
    def next_after(self, after: datetime, tz: ZoneInfo) -> datetime | None: ...
    def between(self, start: datetime, end: datetime, tz: ZoneInfo) -> list[datetime]: ...


class ScheduledBlock(Protocol):
    """What the plan reads of a schedule block (``routine.schedule.model.Block``, a layer up)."""

    @property
    def id(self) -> str: ...
    @property
    def enabled(self) -> bool: ...
    @property
    def timezone(self) -> str | None: ...
    @property
    def cron(self) -> _Cron: ...
    @property
    def steps(self) -> Sequence[StepSpec]: ...


def upcoming_uses(config: Config, agents: dict[str, AgentSpec], blocks: Iterable[ScheduledBlock], start: datetime,
                  end: datetime, default_tz: ZoneInfo, step_estimate: timedelta = STEP_ESTIMATE,
                  held: Callable[[str, datetime], str | None] | None = None) -> list[Use]:
    """Every scheduled step's model need in (start, end], a block's later steps placed
    ``step_estimate`` apart after its fire time; a slot ``held`` (paused, a holiday) needs none."""
    uses = []
    for block in blocks:
        if not block.enabled:
            continue
        tz = ZoneInfo(block.timezone) if block.timezone else default_tz
        for fire in block.cron.between(start, end, tz):
            if held is not None and held(block.id, fire):
                continue
            for index, step in enumerate(block.steps):
                agent = agents.get(step.agent)
                key = alias_key(config, agent.model) if agent else None
                if agent is not None and key is not None:
                    uses.append(Use(fire + index * step_estimate, key, agent.model, agent.name, block.id, index))
    uses.sort(key=lambda u: (u.at.astimezone(timezone.utc), u.block or "", u.step))
    return uses


def next_scheduled_use(config: Config, agents: dict[str, AgentSpec], blocks: Iterable[ScheduledBlock], key: ModelKey,
                       after: datetime, default_tz: ZoneInfo,
                       step_estimate: timedelta = STEP_ESTIMATE) -> datetime | None:
    """The first time at or after ``after`` a scheduled step needs model ``key``: one cron
    lookup per step that uses it (the live manager asks this at every eviction)."""
    best = None
    for block in blocks:
        if not block.enabled:
            continue
        tz = ZoneInfo(block.timezone) if block.timezone else default_tz
        for index, step in enumerate(block.steps):
            agent = agents.get(step.agent)
            if agent is None or alias_key(config, agent.model) != key:
                continue
            offset = index * step_estimate
            fire = block.cron.next_after(after - offset - timedelta(microseconds=1), tz)
            if fire is not None and (best is None or fire + offset < best):
                best = fire + offset
    return best


class Forecast:
    """When each model is next needed, from a sorted list of uses."""

    def __init__(self, uses: list[Use]):
        self.uses = uses

    def next_use(self, model: ModelKey, after: datetime) -> datetime | None:
        for use in self.uses:
            if use.model == model and use.at >= after:
                return use.at
        return None


# --- simulations (for the plan and the benchmark) ---------------------------------------------


@dataclass
class Decision:
    use: Use
    warm: bool                        # resident when the step began
    loaded: bool                      # a load was needed for it
    evicted: ModelKey | None = None   # what the load pushed out
    expired: list[ModelKey] = field(default_factory=list)  # Ollama's keep_alive ran out before it
    idle_unloaded: list[ModelKey] = field(default_factory=list)  # routine unloaded them as idle before it


@dataclass
class Simulation:
    policy: str
    decisions: list[Decision]

    @property
    def loads(self) -> int:
        return sum(d.loaded for d in self.decisions)

    @property
    def idle_unloads(self) -> int:
        return sum(len(d.idle_unloaded) for d in self.decisions)

    @property
    def warm_share(self) -> float:
        return sum(d.warm for d in self.decisions) / len(self.decisions) if self.decisions else 1.0


def _farthest(resident: list[ModelKey], seq: list[ModelKey], i: int, last_used: dict[ModelKey, int]) -> ModelKey:
    """Belady's victim: the resident model used farthest in the future (never = farthest);
    ties go to the least recently used."""
    def distance(m: ModelKey) -> tuple[int, int]:
        try:
            return (seq.index(m, i + 1), -last_used.get(m, -1))
        except ValueError:
            return (len(seq) + 1, -last_used.get(m, -1))
    return max(resident, key=distance)


def belady_loads(seq: list[ModelKey], slots: int, initial: tuple[ModelKey, ...] = ()) -> int:
    """The fewest loads any policy can do for this request sequence with ``slots`` resident
    (Belady's MIN is optimal for uniform load costs)."""
    resident, loads = list(initial)[:slots], 0
    last_used: dict[ModelKey, int] = {}
    for i, m in enumerate(seq):
        if m not in resident:
            loads += 1
            if len(resident) >= slots:
                resident.remove(_farthest(resident, seq, i, last_used))
            resident.append(m)
        last_used[m] = i
    return loads


def simulate_ours(uses: list[Use], slots: int, initial: tuple[ModelKey, ...] = (),
                  idle_unload: timedelta | None = None) -> Simulation:
    """Our policy: Belady eviction with the schedule known, every scheduled load done ahead of
    its step (preload), and a model unloaded once nothing needs it for ``idle_unload``.
    Unscheduled uses (manual, trigger) cannot be preloaded: they start cold when not resident."""
    seq = [u.model for u in uses]
    resident, out = list(initial)[:slots], []
    last_used: dict[ModelKey, int] = {}
    for i, use in enumerate(uses):
        idle = [] if idle_unload is None else [m for m in resident
                                                if _idle_unloaded(m, uses, last_used, use.at, idle_unload)]
        resident = [m for m in resident if m not in idle]
        decision = Decision(use, warm=use.model in resident, loaded=use.model not in resident, idle_unloaded=idle)
        if decision.loaded:
            if len(resident) >= slots:
                decision.evicted = _farthest(resident, seq, i, last_used)
                resident.remove(decision.evicted)
            resident.append(use.model)
            # Preloaded before its step began, unless what it evicts is busy with the block's
            # previous step (then the manager waits for that step: a cold start, no extra load).
            previous = uses[i - 1] if i else None
            busy = (previous is not None and previous.block == use.block and previous.kind == use.kind
                    and previous.step == use.step - 1 and previous.model == decision.evicted)
            decision.warm = use.kind == "schedule" and not busy
        last_used[use.model] = i
        out.append(decision)
    return Simulation("ours", out)


def _idle_unloaded(model: ModelKey, uses: list[Use], last_used: dict[ModelKey, int], now: datetime,
                   idle_unload: timedelta) -> bool:
    """The live rule (``IdleRule``): once idle for IDLE_GRACE, a model goes if its next use is
    more than ``idle_unload`` away. Its next use only comes closer, so checking at the end of
    the grace decides."""
    if model not in last_used:
        return False
    i = last_used[model]
    checked_at = uses[i].at + IDLE_GRACE
    if now < checked_at:
        return False
    later = next((u.at for u in uses[i + 1:] if u.model == model), None)
    return later is None or later - checked_at > idle_unload


def simulate_ollama(uses: list[Use], slots: int, keep_alive: timedelta = OLLAMA_KEEP_ALIVE,
                    step_estimate: timedelta = STEP_ESTIMATE, initial: tuple[ModelKey, ...] = ()) -> Simulation:
    """Ollama's own scheduler with OLLAMA_MAX_LOADED_MODELS=slots: load on demand, unload a model
    idle for ``keep_alive``, and when full evict the idle model that expires soonest (the least
    recently used, as every request has the same keep_alive)."""
    expires: dict[ModelKey, datetime] = {m: uses[0].at + keep_alive for m in initial[:slots]} if uses else {}
    out = []
    for use in uses:
        gone = [m for m, until in expires.items() if until <= use.at]
        for m in gone:
            del expires[m]
        decision = Decision(use, warm=use.model in expires, loaded=use.model not in expires, expired=gone)
        if decision.loaded and len(expires) >= slots:
            decision.evicted = min(expires, key=expires.__getitem__)
            del expires[decision.evicted]
        expires[use.model] = use.at + step_estimate + keep_alive
        out.append(decision)
    return Simulation("ollama", out)
