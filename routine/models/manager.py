"""The model manager: at most ``max_resident`` models resident on each Ollama host, with swaps
chosen knowing the schedule.

Every model call takes a lease here first (``ModelClient`` does it):
- the model is resident already (Ollama's ``/api/ps``) with our pinned context: the lease is
  granted at once, a warm start;
- a slot is free (resident models + loads in flight < ``max_resident``): we load the model
  with the alias's pinned options, so the chat request that follows finds it warm;
- all slots are taken: wait until some resident model is idle (no lease), unload that victim
  with ``keep_alive: 0``, confirm it is gone from ``/api/ps``, and only then load. While a
  swap is under way both models count, so a third load never begins.

The victim is the idle model of ours whose next use is farthest away (``forecast``: queued
work first, then the schedule; Belady's rule), ties going to the least recently used. Models
another client loaded (the person's own ``ollama run``) count toward the limit and are left
alone unless ``ollama.unload_foreign`` is set. Every load and unload is journaled with why.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Callable

from routine.config.model import Config, Deployment, ModelAlias
from routine.errors import ModelBusy, ModelError
from routine.jsonvalue import JSONObject
from routine.models import ollama_host
from routine.models.plan import IDLE_GRACE, ModelKey

if TYPE_CHECKING:
    from routine.journal.model_events import ModelEvents
    from routine.models.ollama_host import Resident

log = logging.getLogger(__name__)

Forecast = Callable[[ModelKey, datetime], "datetime | None"]
WAIT_SLICE = 5.0            # while work waits for a slot, look at /api/ps this often
UNLOAD_CONFIRM_SECONDS = 60.0


@dataclass
class _Resident:
    ours: bool
    last_used: datetime
    context: int | None = None
    alias: str | None = None


@dataclass
class _Host:
    resident: dict[str, _Resident] = field(default_factory=dict)
    loading: set[str] = field(default_factory=set)
    unloading: set[str] = field(default_factory=set)
    leases: Counter[str] = field(default_factory=Counter)
    # Bumped whenever one of our loads or unloads completes: a /api/ps answer fetched before
    # that knows nothing of it, and must not make a model just loaded look gone (or one just
    # unloaded look back). ``changed``: each model's generation after our last change to it;
    # the rest of such an answer (another program's models) still counts.
    generation: int = 0
    changed: dict[str, int] = field(default_factory=dict)

    def ours_changed(self, name: str) -> None:
        """One of our loads or unloads of ``name`` completed (lock held)."""
        self.generation += 1
        self.changed[name] = self.generation


@dataclass
class Lease:
    """A model held for one call. ``warm``: it was resident when the call began."""

    manager: "ModelManager"
    host: str
    name: str
    warm: bool
    load_ms: int | None = None
    _released: bool = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            self.manager._release(self)

    def __enter__(self) -> "Lease":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class ModelManager:
    def __init__(self, config: Config, events: ModelEvents | None = None, forecast: Forecast | None = None,
                 clock: Callable[[], datetime] | None = None, managed: bool = False) -> None:
        self.config = config
        self.events = events  # routine.journal.model_events.ModelEvents, or None (dry runs)
        self.forecast = forecast or (lambda key, now: None)
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        # managed: the daemon unloads idle models itself, so Ollama must never expire ours.
        self.managed = managed
        self.on_release: Callable[[], None] = lambda: None
        self._cond = threading.Condition()
        self._hosts: dict[str, _Host] = {}

    def keep_alive_for(self, alias: ModelAlias) -> str | int:
        return -1 if self.managed else alias.keep_alive

    # --- leases --------------------------------------------------------------------------------

    def lease(self, alias: ModelAlias, dep: Deployment, run_id: str | None = None,
              timeout: float | None = None, on_load: Callable[[], None] | None = None) -> Lease:
        """Hold ``dep``'s model for one call, loading it (and evicting) if needed (``on_load`` is
        told just before a load begins: a progress phase for the person)."""
        host, name = dep.api_base, dep.served_name
        deadline = time.monotonic() + (timeout if timeout is not None else self.config.request_timeout)
        while True:
            gen, ps = self._ps(host)
            with self._cond:
                st = self._sync(host, ps, gen)
                r = st.resident.get(name)
                busy = name in st.loading or name in st.unloading
                if r is not None and not busy and r.context in (None, alias.num_ctx):
                    st.leases[name] += 1
                    r.last_used = self.clock()
                    return Lease(self, host, name, warm=True)
                if busy:
                    self._wait(deadline, host, name)
                    continue
                victim = None
                if r is None and len(set(st.resident) | st.loading) >= self.config.max_resident:
                    victim = self._victim(host, st)
                    if victim is None:
                        self._wait(deadline, host, name)
                        continue
                    st.unloading.add(victim)
                st.loading.add(name)
            if on_load is not None:
                on_load()
            load_ms = self._swap_in(alias, dep, victim, "on-demand", run_id, lease=True)
            return Lease(self, host, name, warm=False, load_ms=load_ms)

    def preload(self, alias: ModelAlias, dep: Deployment, needed_at: datetime, run_id: str | None = None,
                reason: str = "preload") -> bool:
        """Load ahead of need, but only into a free slot or over a model needed later than
        ``needed_at``: a preload never delays work that is due sooner. Never waits."""
        if not dep.provider.manages_residency:
            return False
        host, name = dep.api_base, dep.served_name
        gen, ps = self._ps(host)
        with self._cond:
            st = self._sync(host, ps, gen)
            if name in st.resident or name in st.loading or name in st.unloading:
                return False
            victim = None
            if len(set(st.resident) | st.loading) >= self.config.max_resident:
                # Belady's choice among all our models, busy ones included: if the model to go
                # is busy now, wait for the step to load on demand rather than evict a model
                # that will be needed again (an extra load later).
                victim = self._victim(host, st, include_busy=True)
                if victim is None or st.leases[victim]:
                    return False
                nxt = self.forecast((host, victim), self.clock())
                if nxt is not None and nxt <= needed_at:
                    return False
                st.unloading.add(victim)
            st.loading.add(name)
        self._swap_in(alias, dep, victim, reason, run_id, lease=False)
        return True

    def _swap_in(self, alias: ModelAlias, dep: Deployment, victim: str | None, reason: str,
                 run_id: str | None, lease: bool) -> int:
        """Unload ``victim`` (confirmed), then load ``dep``: both were reserved by the caller.
        ``lease``: count a lease of it as it becomes resident. Returns the load's milliseconds."""
        host, name = dep.api_base, dep.served_name
        st = self._hosts[host]
        try:
            if victim is not None:
                self._unload(host, victim, f"evict-for:{name}", run_id)
            started = time.monotonic()
            load_ms = ollama_host.load(name, host, alias.request_options(), self.keep_alive_for(alias),
                                       self.config.request_timeout)
            load_ms = load_ms or int((time.monotonic() - started) * 1000)
        except BaseException:
            with self._cond:
                st.loading.discard(name)
                if victim is not None:
                    st.unloading.discard(victim)
                self._cond.notify_all()
            raise
        self._record(host, name, "load", reason, alias.name, load_ms, run_id)
        log.info("loaded %s on %s in %d ms (%s)", name, host, load_ms, reason)
        with self._cond:
            st.loading.discard(name)
            st.ours_changed(name)
            st.resident[name] = _Resident(True, self.clock(), alias.num_ctx, alias.name)
            if lease:
                st.leases[name] += 1
            self._cond.notify_all()
        return load_ms

    def _release(self, lease: Lease) -> None:
        with self._cond:
            st = self._hosts[lease.host]
            st.leases[lease.name] -= 1
            if lease.name in st.resident:
                st.resident[lease.name].last_used = self.clock()
            self._cond.notify_all()
        self.on_release()

    def _wait(self, deadline: float, host: str, name: str) -> None:
        """Wait (lock held) for a lease to end or a load to finish; refresh /api/ps meanwhile."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise self._busy(host, name)
        self._cond.wait(min(WAIT_SLICE, left))

    def _busy(self, host: str, name: str) -> ModelBusy:
        st = self._hosts[host]
        held = [f"{n} ({'in use' if st.leases[n] else 'loaded by another program'})" for n in st.resident]
        return ModelBusy(
            f"No model slot on {host} came free for {name}: {', '.join(held) or 'slots busy'} "
            f"(routine keeps at most {self.config.max_resident}).",
            "free one with `ollama stop NAME`, or set `ollama.unload_foreign: true` or a higher "
            "`ollama.max_resident` in routine.yaml.")

    # --- choosing and unloading ----------------------------------------------------------------

    def _victim(self, host: str, st: _Host, include_busy: bool = False) -> str | None:
        now = self.clock()
        far = datetime.max.replace(tzinfo=timezone.utc)
        candidates = [n for n, r in st.resident.items() if (include_busy or not st.leases[n])
                      and n not in st.unloading and n not in st.loading and (r.ours or self.config.unload_foreign)]
        if not candidates:
            return None
        # Farthest next use first (Belady); then least recently used.
        return max(candidates, key=lambda n: (self.forecast((host, n), now) or far,
                                              -st.resident[n].last_used.timestamp()))

    def _unload(self, host: str, name: str, reason: str, run_id: str | None = None, confirm: bool = True) -> None:
        """Unload and (unless told not to) wait until /api/ps no longer lists the model."""
        ollama_host.unload(name, host)
        deadline, pause = time.monotonic() + UNLOAD_CONFIRM_SECONDS, 0.05
        while confirm and any(r.name == name for r in ollama_host.resident(host)):
            if time.monotonic() > deadline:
                with self._cond:
                    self._hosts[host].unloading.discard(name)
                raise ModelError(f"Ollama at {host} did not unload {name} within {int(UNLOAD_CONFIRM_SECONDS)} s.",
                                 "check `ollama ps`; another program may be using the model.")
            time.sleep(pause)
            pause = min(pause * 2, 1.0)
        with self._cond:
            st = self._hosts[host]
            alias = st.resident.pop(name, _Resident(False, self.clock())).alias
            st.unloading.discard(name)
            st.ours_changed(name)
            self._cond.notify_all()
        self._record(host, name, "unload", reason, alias, None, run_id)
        log.info("unloaded %s on %s (%s)", name, host, reason)

    def unload_idle(self) -> datetime | None:
        """Unload our idle models that nothing needs for ``idle_unload``; returns when to look
        again (None: nothing of ours is resident)."""
        now, horizon = self.clock(), timedelta(seconds=self.config.idle_unload)
        todo, again = [], []
        with self._cond:
            for host, st in self._hosts.items():
                for name, r in st.resident.items():
                    if not r.ours or st.leases[name] or name in st.unloading or name in st.loading:
                        continue
                    if now < r.last_used + IDLE_GRACE:
                        again.append(r.last_used + IDLE_GRACE)
                        continue
                    nxt = self.forecast((host, name), now)
                    if nxt is None or nxt - now > horizon:
                        st.unloading.add(name)
                        todo.append((host, name))
                    else:
                        again.append(nxt + IDLE_GRACE)
        for host, name in todo:
            try:
                self._unload(host, name, "idle")
            except ModelError as exc:
                log.warning("idle unload failed: %s", exc.message)
        return min(again) if again else None

    def shutdown(self) -> None:
        """Unload every model of ours: a stopped routine leaves the box's memory free. A model
        still in use by an abandoned step is unloaded by Ollama when that request ends."""
        with self._cond:
            todo = [(h, n, not st.leases[n]) for h, st in self._hosts.items() for n, r in st.resident.items()
                    if r.ours and n not in st.unloading]
            for h, n, _ in todo:
                self._hosts[h].unloading.add(n)
        for host, name, idle in todo:
            try:
                self._unload(host, name, "shutdown", confirm=idle)
            except ModelError as exc:
                log.warning("could not unload %s at shutdown: %s", name, exc.message)

    # --- bookkeeping ---------------------------------------------------------------------------

    def _ps(self, host: str) -> tuple[int, list[Resident]]:
        """/api/ps, with the generation of our view it was asked at."""
        with self._cond:
            gen = self._hosts.setdefault(host, _Host()).generation
        return gen, ollama_host.resident(host)

    def _sync(self, host: str, ps: list[Resident], gen: int | None = None) -> _Host:
        """Bring our view of ``host`` in line with /api/ps (lock held), except for the models
        one of our loads or unloads changed since ``ps`` was asked (generation ``gen``): of
        those our view is newer. Every other model it lists (another program's) counts."""
        st = self._hosts.setdefault(host, _Host())
        newer = {n for n, at in st.changed.items() if gen is not None and at > gen}
        now, seen = self.clock(), {r.name: r for r in ps if r.name not in newer}
        for name in [n for n in st.resident if n not in seen and n not in st.unloading and n not in st.loading
                     and n not in newer]:
            gone = st.resident.pop(name)
            if gone.ours:
                self._record(host, name, "gone", "unloaded by Ollama or another client", gone.alias, None, None)
                log.warning("%s on %s was unloaded behind routine's back", name, host)
        for name, r in seen.items():
            if name in st.loading:
                continue
            known = st.resident.get(name)
            if known is None:
                ours = self._loaded_by_us(host, name)
                st.resident[name] = known = _Resident(ours, now, r.context_length)
            known.context = r.context_length or known.context
        return st

    def _loaded_by_us(self, host: str, name: str) -> bool:
        if self.events is None:
            return False
        return self.events.last_load(host, name) is not None

    def _record(self, host: str, name: str, event: str, reason: str, alias: str | None, load_ms: int | None,
                run_id: str | None) -> None:
        if self.events is None:
            return
        try:
            self.events.record(host=host, model=name, event=event, reason=reason, alias=alias,
                               load_duration_ms=load_ms, run_id=run_id, at=self.clock())
        except sqlite3.Error as exc:  # a full state disk: the history misses a line, residency goes on
            log.warning("could not journal the %s of %s on %s: %s", event, name, host, exc)

    def refresh(self, host: str) -> None:
        """Look at the host's /api/ps now (before choosing between deployments)."""
        gen, ps = self._ps(host)
        with self._cond:
            self._sync(host, ps, gen)

    def is_resident(self, dep: Deployment) -> bool:
        with self._cond:
            st = self._hosts.get(dep.api_base)
            return bool(st and dep.served_name in st.resident and dep.served_name not in st.unloading)

    def has_free_slot(self, dep: Deployment) -> bool:
        with self._cond:
            st = self._hosts.get(dep.api_base)
            return st is None or len(set(st.resident) | st.loading) < self.config.max_resident

    def snapshot(self) -> list[JSONObject]:
        """What is resident, by host: for `routine status` and the dashboard."""
        with self._cond:
            return [{"host": h, "model": n, "ours": r.ours, "alias": r.alias, "in_use": st.leases[n],
                     "last_used": r.last_used.isoformat(timespec="seconds")}
                    for h, st in self._hosts.items() for n, r in st.resident.items()]
