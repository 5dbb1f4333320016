"""What the daemon does for a project's case file, once ``flows/reactions.py`` decided it (it
subscribes to those reactions in ``vault_events``):

- ``Reload``: a project's home note changed: reload, so its cadence (digest, review blocks) follows
  the edit like any schedule; ``React``: the manager reacts to it (`cadence: {react: off}` stops it);
- ``LookForTasks``: a task assigned to an agent is picked up (``flows.pickup``); ``TellPerson``: one
  assigned to a person is told once (``daemon.person_tasks``, when `notify:` is set);
- ``StaleQA``: an artifact that passed QA was edited: it goes back to `qa: needed`.

At start-up, tasks assigned while the daemon was down and tasks a stop interrupted are picked up.
A task whose pickup failed waits out its backoff (``flows.pickup.Backoff``): a timer looks at
its project again when the wait is over. A pause of everything (or a holiday) holds pickups and the
manager's reactions: each is kept (``schedule.held``, as a vault trigger's run) and runs once when
the hold ends (``released``); `routine status` lists them.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from zoneinfo import ZoneInfo

from routine import paths
from routine.daemon.person_tasks import tell
from routine.daemon.ports import Jobs
from routine.daemon.work import Work
from routine.flows.case_files import needs_qa_again, react_request
from routine.flows.pickup import Backoff, pending, run_pickup
from routine.flows.reactions import LookForTasks, React, Reload, StaleQA, TellPerson
from routine.journal import Journal
from routine.schedule import pause
from routine.schedule.held import PROJECTS as HOLDER
from routine.schedule.held import HeldTrigger, Origin

if TYPE_CHECKING:
    from routine.daemon.subscriptions import Reactions
    from routine.flows.pickup import Pickup

log = logging.getLogger(__name__)


class Host(Jobs, Protocol):
    """What the case files need of the daemon: queueing runs (``Jobs``), a reload when a home
    note's cadence changes, and whether it is stopping."""

    @property
    def stopping(self) -> threading.Event: ...
    def reload(self) -> None: ...
    def hold(self, item: HeldTrigger) -> bool: ...


class ProjectEvents:
    def __init__(self, host: Host):
        self.host = host
        self.backoff = Backoff(host.live.config.pickup_backoff)
        self._timers: dict[str, threading.Timer] = {}  # task key -> the look again after its backoff
        self._lock = threading.Lock()

    @property
    def vault(self) -> Path:
        return self.host.live.config.vault

    def catch_up(self) -> None:
        self._submit_pending(None, interrupted=True)

    def subscribe(self, reactions: Reactions) -> None:
        """Apply what a case file's change calls for (``flows/reactions.py`` decides)."""
        reactions.subscribe(lambda _: self.host.reload(), Reload)  # the cadence follows the home note
        reactions.subscribe(self._stale_qa, StaleQA)
        reactions.subscribe(self._tell, TellPerson)
        reactions.subscribe(lambda pickup: self._submit_pending(pickup.folder), LookForTasks)
        reactions.subscribe(self._react, React)

    def _stale_qa(self, reaction: StaleQA) -> None:
        if needs_qa_again(self.vault, reaction.rel):
            log.info("%s changed after it passed QA: it needs QA again", reaction.rel)

    def _tell(self, reaction: TellPerson) -> None:
        tell(self.host.live.config, reaction, self.host.now_local())

    def _paused(self, what: str, item: HeldTrigger) -> bool:
        """A pause of everything or a holiday holds pickups and the manager's reactions too: ``item``
        is kept until it ends (``released``); the tasks stay assigned in their notes meanwhile."""
        config, now = self.host.live.config, self.host.now_local()
        why = pause.holder(paths.state_dir(), config.holiday, HOLDER, ZoneInfo(config.zone_name()))(now)
        if why:
            self.host.hold(replace(item, since=now, why=why))
            log.info("%s waits: %s", what, why)
        return why is not None

    def released(self, item: HeldTrigger) -> None:
        """The hold is over: the pickup or the reaction it kept runs now."""
        if item.origin is Origin.PICKUP:
            self._submit_pending(item.rel or None, interrupted=item.kind == "interrupted")
            return
        project = item.payload or {}
        self._react(React(str(project.get("project", "")), str(project.get("slug", "")), item.trigger, item.rel,
                          item.kind))

    def _submit_pending(self, folder: str | None, interrupted: bool = False) -> None:
        pickup = HeldTrigger("pickup", "interrupted" if interrupted else "changed", folder or "",
                             self.host.now_local(), "", origin=Origin.PICKUP)
        if self._paused(f"task pickup in {folder or 'every project'}", pickup):
            return
        for pick in pending(self.vault, self.host.live.agents, folder, interrupted=interrupted):
            wait = self.backoff.wait(pick.key, time.monotonic())
            if wait > 0:
                self._look_again(pick, wait)
                continue
            work = Work(key=pick.key, label=f"task {pick.task.text!r} for {pick.agent.name}",
                        run=partial(self._run_pickup, pick), models=self.host.model_keys([pick.agent.name]))
            if self.host.queue.submit(work, coalesce=True):
                log.info("%s picks up the task %r in %s", pick.agent.name, pick.task.text,
                         pick.project.name or pick.task.file)

    def _run_pickup(self, pick: Pickup) -> None:
        journal = Journal()
        ok: bool | None = False
        try:
            ok = run_pickup(self.host.make_runner(journal), self.vault, pick, self.host.now_local(),
                            agents=self.host.live.agents)
        finally:
            journal.close()
            if ok is False:
                self.backoff.base = self.host.live.config.pickup_backoff  # as the config says now
                delay = self.backoff.failed(pick.key, time.monotonic())
                log.warning("the task %r for %s failed; it is tried again in %.0f s", pick.task.text,
                            pick.agent.name, delay)
            elif ok:
                self.backoff.succeeded(pick.key)
            # Our rewrite of the task line may have folded in a save the person made meanwhile (a file
            # that settles to our bytes is no change to the watcher): look at the project again. After
            # a failure, even one that raised, this sets the timer that tries the task again.
            if not self.host.stopping.is_set():
                self._submit_pending(pick.project.folder)

    def _look_again(self, pick: Pickup, wait: float) -> None:
        """One timer per waiting task: when its backoff is over, its project is looked at again."""
        folder = pick.project.folder

        def due() -> None:
            with self._lock:
                self._timers.pop(pick.key, None)
            if not self.host.stopping.is_set():
                self._submit_pending(folder)

        with self._lock:
            if pick.key in self._timers:
                return
            timer = self._timers[pick.key] = threading.Timer(wait + 0.05, due)
            timer.daemon = True
            timer.start()

    def _react(self, reaction: React) -> None:
        kept = HeldTrigger(reaction.manager, reaction.kind, reaction.rel, self.host.now_local(), "",
                           origin=Origin.REACTION, payload={"project": reaction.project, "slug": reaction.slug})
        if self._paused(f"{reaction.manager}'s reaction to {reaction.rel}", kept):
            return
        work = Work(key=f"project-react:{reaction.slug}", label=f"{reaction.manager} reacts to {reaction.rel}",
                    run=partial(self._run_react, reaction.manager, reaction.project, reaction.rel, reaction.kind),
                    models=self.host.model_keys([reaction.manager]))
        self.host.queue.submit(work, coalesce=True)

    def _run_react(self, agent_name: str, project: str, rel: str, kind: str) -> None:
        request = react_request(self.vault, self.host.live.agents, agent_name, project, rel, kind)
        if request is None:
            return
        journal = Journal()
        try:
            self.host.make_runner(journal).run_step(request)
        finally:
            journal.close()
