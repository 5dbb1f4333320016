"""What the daemon does when a case file changes (a listener of ``vault_events``):

- a project's home note changed: reload, so its cadence (digest, review blocks) follows the
  edit like any schedule, and the manager reacts to the change (`cadence: {react: off}` stops it);
- a task was assigned to an agent: the agent picks it up (``projects.pickup``); to a person: they
  are told once (``daemon.person_tasks``, when `notify:` is set);
- an artifact that passed QA was edited: it goes back to `qa: needed`.

At start-up, tasks assigned while the daemon was down and tasks a stop interrupted are picked up.
A task whose pickup failed waits out its backoff (``projects.pickup.Backoff``): a timer looks at
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
from routine.config.model import WriteSpec
from routine.daemon.person_tasks import tell_people
from routine.daemon.ports import Jobs
from routine.daemon.work import Work
from routine.flows.pickup import Backoff, pending, run_pickup
from routine.journal import Journal
from routine.projects.artifacts import mark_needs_qa, read_artifact
from routine.projects.assignees import loose_task_notes
from routine.projects.model import (
    PROJECTS,
    find_project,
    is_home_note,
    project_folder_of,
)
from routine.projects.model import loose
from routine.prompts import template
from routine.runner.request import StepRequest
from routine.schedule import pause
from routine.schedule.held import PROJECTS as HOLDER, HeldTrigger, Origin
from routine.schedule.project_cadence import manager_agent

if TYPE_CHECKING:
    from routine.flows.pickup import Pickup
    from routine.watch.changes import Change

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

    def on_change(self, change: Change) -> None:
        rel = change.rel
        if not rel.endswith(".md"):
            return
        if not rel.startswith(PROJECTS + "/"):
            if change.kind != "deleted":
                self._loose_change(rel)
            return
        home = is_home_note(rel) or (change.src and is_home_note(change.src))
        if home:
            self.host.reload()  # the cadence follows the home note
        folder = project_folder_of(rel)
        if change.kind == "deleted" or folder is None:
            return
        self._stale_qa(rel)
        tell_people(self.host.live.config, rel, self.host.now_local())
        self._submit_pending(folder)
        if home:
            self._react(folder, rel, change.kind)

    def _loose_change(self, rel: str) -> None:
        """A note outside every project: an agent note (its `tasks:` may name a new task note) or a
        note an agent's `tasks:` names (a task line there assigned or changed)."""
        agents = self.host.live.agents
        if rel.startswith(self.host.live.config.layout.agents + "/"):
            if any(agent.source == rel for agent in agents.values()):
                for note in loose_task_notes(self.vault, "", rel):
                    self._submit_pending(loose(note).folder)
            return
        if any(rel in loose_task_notes(self.vault, agent.name, agent.source) for agent in agents.values()):
            self._submit_pending(loose(rel).folder)

    def _stale_qa(self, rel: str) -> None:
        artifact = read_artifact(self.vault, rel)
        if artifact is not None and mark_needs_qa(self.vault, artifact):
            log.info("%s changed after it passed QA: it needs QA again", rel)

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
        folder = project_folder_of(item.rel)
        if folder is not None:
            self._react(folder, item.rel, item.kind)

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

    def _react(self, folder: str, rel: str, kind: str) -> None:
        project = find_project(self.vault, folder.split("/", 1)[1])
        if project is None or str(project.cadence.get("react", "on")).lower() in ("off", "false", "no"):
            return
        manager = manager_agent(self.vault, project, self.host.live.agents)
        if manager is None or self._paused(f"{manager.name}'s reaction to {rel}", HeldTrigger(
                manager.name, kind, rel, self.host.now_local(), "", origin=Origin.REACTION)):
            return
        work = Work(key=f"project-react:{project.slug}", label=f"{manager.name} reacts to {rel}",
                    run=partial(self._run_react, manager.name, project.name, rel, kind),
                    models=self.host.model_keys([manager.name]))
        self.host.queue.submit(work, coalesce=True)

    def _run_react(self, agent_name: str, project: str, rel: str, kind: str) -> None:
        agent = self.host.live.agents.get(agent_name)
        found = find_project(self.vault, project)
        if agent is None or found is None:
            return
        journal = Journal()
        try:
            request = StepRequest(
                agent=agent,
                task=template("project_react.md.j2"),
                write=WriteSpec(note="{{ project_folder }}/Digests/{{ today }}.md", section="Changes"),
                trigger=f"trigger:{rel}",
                variables={"path": rel, "event": kind, "project_folder": found.folder},
                details={"project": project, "path": rel, "event": kind},
            )
            self.host.make_runner(journal).run_step(request)
        finally:
            journal.close()
