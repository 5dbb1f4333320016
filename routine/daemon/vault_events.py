"""What the daemon does when a note changes: it watches, and applies what the change means.

The vault watcher (``routine.watch``) reports settled changes; ``flows/reactions.py`` decides what
each one calls for (pure), and the parts of the daemon that subscribed to those reactions
(``daemon/subscriptions.py``) apply them: work in the one queue, so trigger runs share the model
manager and the journal with scheduled ones. Applied here:
- ``Decide``: a proposal in Drafts/ whose ``approved`` property the person set is decided;
- ``Answer``: a question note in Inbox/ whose ``answer:`` the person filled in answers its question;
- ``Fire``: a trigger whose ``on``, ``path`` glob and ``where`` match runs its agent on the note
  (held while a pause or a holiday holds it);
- ``Index``, ``Graph``: the search index and the knowledge graph hear of the change.
Elsewhere: a project's case file (``project_events``), chat notes (``chat_notes``), reminders
(``timed_reminders``).
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Callable, Protocol
from zoneinfo import ZoneInfo

from routine import paths
from routine.access import resolve
from routine.daemon.chat_notes import ChatNotes
from routine.daemon.event_op import submit_event
from routine.daemon.graph_feed import GraphFeeder
from routine.daemon.index_feed import IndexFeeder
from routine.daemon.ports import Jobs
from routine.daemon.project_events import ProjectEvents
from routine.daemon.subscriptions import Reactions
from routine.daemon.work import Work
from routine.flows.approval import decide
from routine.flows.reactions import Answer, Decide, Fire, Graph, Index, View, on_vault_change
from routine.journal import Journal
from routine.journal.runs import RunDetails
from routine.person.alerts import raise_alert
from routine.runner.request import StepRequest
from routine.schedule import held, pause
from routine.schedule.events import Payload
from routine.schedule.held import HeldTrigger, Origin
from routine.schedule.triggers import debounce_for
from routine.vault.atomic import add_write_listener, remove_write_listener
from routine.vault.question_notes import QUIET_SECONDS, is_question_note
from routine.watch.changes import Change
from routine.watch.state import FileStates
from routine.watch.watcher import VaultWatcher

if TYPE_CHECKING:
    from routine.daemon.graph_feed import GraphFeeder
    from routine.daemon.questions import QuestionKeeper
    from routine.flows.approval import Decided
    from routine.memory.remote import RemoteIndex
    from routine.schedule.model import Trigger

log = logging.getLogger(__name__)

MIN_QUIET = 0.4  # seconds a note must be still before it counts as saved (an editor's save is one burst)


class Host(Jobs, Protocol):
    """What the vault's events need of the daemon (its listeners too: the index feed reads
    ``memory``, case files ``reload`` the schedule)."""

    @property
    def stopping(self) -> threading.Event: ...
    @property
    def memory(self) -> RemoteIndex | None: ...
    @property
    def questions(self) -> QuestionKeeper: ...
    def changed(self) -> None: ...
    def reload(self) -> None: ...
    def hold(self, item: HeldTrigger) -> bool: ...


class VaultEvents:
    def __init__(self, host: Host):
        self._missing_since: tuple[datetime, str] | None = None  # (when, why) while the vault is missing
        self.host = host
        self.reactions = Reactions()  # who applies which reaction (``flows/reactions.py`` decides them)
        self.reminder_notes: Callable[[], frozenset[str]] = frozenset  # notes holding a waiting reminder
        self.watcher: VaultWatcher | None = None
        self._states: FileStates | None = None
        self._feed: IndexFeeder | None = None
        self.chats: ChatNotes | None = None  # routine.daemon.chat_notes: chat notes answered
        self.graph_feed: GraphFeeder | None = None
        self.projects: ProjectEvents | None = None
        self._timer: threading.Timer | None = None  # at the end of a hold: held trigger runs fire
        self._timer_lock = threading.Lock()

    # --- life cycle --------------------------------------------------------------------------------

    def start(self) -> None:
        """Watch the vault: catch up with what changed while down, then follow every save."""
        config = self.host.live.config
        reactions = self.reactions
        reactions.subscribe(self._decided, Decide)
        reactions.subscribe(self._answered, Answer)
        reactions.subscribe(lambda fire: self._fire(fire.trigger, fire.change), Fire)
        feed = self._feed = IndexFeeder(lambda: self.host.memory)
        reactions.subscribe(lambda index: feed.on_change(index.change), Index)
        projects = self.projects = ProjectEvents(self.host)  # case files: cadence reload, task pickup, QA staleness
        projects.subscribe(reactions)
        self.chats = ChatNotes(self.host)
        self.chats.subscribe(reactions)
        feed.start()
        # issue 15: the knowledge graph follows too
        graph = self.graph_feed = GraphFeeder(lambda: self.host.live.config.vault, self._canvas_blocked)
        reactions.subscribe(lambda change: graph.on_change(change.change), Graph)
        graph.start()
        self._states = FileStates()
        self.watcher = VaultWatcher(config.vault, self.on_change, self._states, quiet_for=self.quiet_for,
                                    reconcile_every=config.reconcile_every, inotify=config.watch_inotify,
                                    on_presence=self.on_presence)
        add_write_listener(self.watcher.own_write)
        caught_up = self.watcher.start()
        if caught_up:
            log.info("%d change(s) in the vault while routine was not watching", len(caught_up))
        projects.catch_up()  # tasks assigned while down, or interrupted by the last stop
        self.release_held()  # what a pause held while down fires if the pause is over, else waits for its end
        if self.watcher.degraded and "limit" in self.watcher.degraded:
            raise_alert(config, self.host.now_local(), "vault watch limit",
                        f"routine cannot watch every folder of the vault: {self.watcher.degraded}. Until then it "
                        "looks for changes every 30 seconds instead, so triggers fire later than usual.")

    def on_presence(self, missing: str | None) -> None:
        """The vault went missing (``missing`` says why) or came back (None): status and the
        dashboard say so; once it is back (and can hold one), an alert tells what happened."""

        now = self.host.now_local()
        if missing:
            self._missing_since = (now, missing)
        elif self._missing_since:
            since, why = self._missing_since
            self._missing_since = None
            raise_alert(self.host.live.config, now, "vault was missing",
                        f"From {since:%Y-%m-%d %H:%M} to {now:%H:%M} {why}. Meanwhile routine wrote nothing into "
                        "it and kept its search index; notes it had already handled were not handled again.",
                        "if it happens often, check the disk's mount (or the sync) that holds the vault.")
        self.host.changed()

    def stop_watching(self) -> None:
        """At shutdown, first: no new changes become work."""
        with self._timer_lock:
            if self._timer is not None:
                self._timer.cancel()
        if self.watcher:
            self.watcher.stop()
        if self._feed:
            self._feed.stop()
        if self.graph_feed:
            self.graph_feed.stop()

    def close(self) -> None:
        """At shutdown, after the queue: our writes no longer need announcing."""
        if self.watcher:
            remove_write_listener(self.watcher.own_write)
        if self._states:
            self._states.close()

    def quiet_for(self, rel: str) -> float:
        """How long a note must be still before its change settles: the longest debounce of the
        triggers watching it (so one save, however many events, is one change)."""
        quiet = MIN_QUIET
        if is_question_note(rel):  # an answer typed in the note counts once the person stopped typing
            quiet = max(quiet, QUIET_SECONDS)
        if self.chats is not None:
            quiet = max(quiet, self.chats.quiet_for(rel) or 0.0)
        return max(quiet, debounce_for(self.host.live.schedules.triggers, rel))

    def view(self) -> View:
        """What a change is judged against now."""
        live = self.host.live
        return View(live.config, live.agents, tuple(live.schedules.triggers),
                    chats=frozenset(self.chats.known) if self.chats else frozenset(),
                    reminder_notes=self.reminder_notes())

    def on_change(self, change: Change) -> None:
        """A settled change: what it means is decided (``flows/reactions.py``), then applied, in order."""
        if self.host.stopping.is_set():
            return
        for reaction in on_vault_change(self.view(), change):
            self.reactions.publish(reaction, change.rel)

    # --- proposals and question notes --------------------------------------------------------------

    def _decided(self, reaction: Decide) -> None:
        rel = reaction.rel
        self.host.queue.submit(Work(key=f"proposal:{rel}", label=f"decide {rel}",
                                      run=partial(self.decide, rel, "obsidian")), coalesce=True)

    def _answered(self, reaction: Answer) -> None:
        """A question note whose `answer:` (or the text below its marker) the person filled in."""
        outcome = self.host.questions.answer(reaction.question, reaction.answer, "note", note=reaction.rel)
        log.info("answer in %s: %s", reaction.rel, outcome.message)

    # --- triggers ----------------------------------------------------------------------------------

    def _fire(self, trigger: Trigger, change: Change, since: datetime | None = None) -> None:
        """Queue ``trigger``'s run on ``change``; held (and kept) while a pause or a holiday holds it.
        ``since``: a held run released, journaled with when it was held."""
        live = self.host.live
        agent = live.agents.get(trigger.agent)
        if agent is None:
            log.error("trigger %s names agent %s, which is not loaded", trigger.id, trigger.agent)
            return
        why = self._held(trigger.id)
        if why:
            self._hold(trigger, change, why)
            return

        readable = change.kind != "deleted" and resolve(live.config, agent).may_read(change.rel)
        details = RunDetails(trigger=trigger.id, event=change.kind, path=change.rel, seen_by=change.source)
        if change.src:
            details["from"] = change.src
        if since:
            details["held"] = since.isoformat()
        work = Work(
            key=f"trigger:{trigger.id}:{change.rel}",
            label=f"trigger {trigger.id} ({change.kind} {change.rel})",
            run=partial(self.run_trigger, trigger, agent.name, change, ("{{ path }}",) if readable else (), details),
            models=self.host.model_keys([agent.name]),
        )
        if self.host.queue.submit(work, coalesce=True):
            log.info("trigger %s fires %s on %s %s", trigger.id, agent.name, change.kind, change.rel)

    def _canvas_blocked(self, rel: str, sentence: str) -> None:
        raise_alert(self.host.live.config, self.host.now_local(), f"canvas {rel.rsplit('/', 1)[-1]} blocked",
                    sentence, "move or rename what is there; the canvas is written at the next change.")

    def _held(self, name: str) -> str | None:
        """A pause of everything (or of this trigger, by its id) or a holiday holds trigger runs too."""
        now = self.host.now_local()
        zone = ZoneInfo(self.host.live.config.zone_name())
        return pause.holder(paths.state_dir(), self.host.live.config.holiday, name, zone)(now)

    def _hold(self, trigger: Trigger, change: Change, why: str) -> None:
        """Keep the run for when the hold ends (once per note), and be woken then."""
        item = HeldTrigger(trigger.id, change.kind, change.rel, self.host.now_local(), why, change.src)
        new = self.hold(item)
        log.info("trigger %s held on %s %s until the pause ends%s: %s", trigger.id, change.kind, change.rel,
                 "" if new else " (it waits already)", why)

    def hold(self, item: HeldTrigger) -> bool:
        """Keep ``item`` (a note's trigger run, an outside event's, a project's pickup or reaction)
        until its hold ends, and be woken then; True if it is new."""
        new = held.hold(paths.state_dir(), item)
        self._arm()
        self.host.changed()
        return new

    def release_held(self) -> None:
        """The hold may have ended (`routine resume`, a pause's end, a holiday over or removed, a
        restart): every run it held fires once; what still waits sets the timer for its end."""
        if self.host.stopping.is_set():
            return
        free = held.release(paths.state_dir(), lambda item: self._held(item.holder))
        triggers = {t.id: t for t in self.host.live.schedules.triggers}
        for item in free:
            self._released(item, triggers.get(item.trigger))
        self._arm()
        if free:
            self.host.changed()

    def _released(self, item: HeldTrigger, trigger: Trigger | None) -> None:
        """Fire one run a hold kept, as it would have fired then (journaled ``held``: since when)."""
        if item.origin in (Origin.PICKUP, Origin.REACTION):
            if self.projects is not None:
                self.projects.released(item)
            return
        if trigger is None:
            log.warning("held trigger %s on %s is gone from the schedule; not fired", item.trigger, item.rel)
            return
        since = f"{item.since:%a %d %b %H:%M}"
        if item.origin is Origin.EVENT:
            log.info("the pause is over: trigger %s fires on the event %s held since %s", item.trigger, item.rel, since)
            submit_event(self.host, trigger, Payload(item.payload or {}), since=item.since)
        else:
            log.info("the pause is over: trigger %s fires on %s %s held since %s", item.trigger, item.kind,
                     item.rel, since)
            self._fire(trigger, Change(item.kind, item.rel, item.src, "held"), since=item.since)

    def _arm(self) -> None:
        """One timer at the end of the hold in force (none when only `routine resume` ends it)."""
        config, now = self.host.live.config, self.host.now_local()
        end = pause.next_end(paths.state_dir(), config.holiday, now, ZoneInfo(config.zone_name()))
        with self._timer_lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if end is None or self.host.stopping.is_set() or not held.load(paths.state_dir()):
                return
            self._timer = threading.Timer(max(0.0, (end - now).total_seconds()) + 0.05, self.release_held)
            self._timer.daemon = True
            self._timer.start()

    # --- the work ------------------------------------------------------------------------------------

    def decide(self, rel: str, by: str, decision: bool | None = None, force: bool = False) -> Decided:
        """Carry out a decision on a proposal (the person's `approved`, or `routine approve`)."""
        live, journal = self.host.live, Journal()
        try:
            return decide(live.config, live.agents, journal, rel, by, self.host.now_local(), decision, force)
        finally:
            journal.close()

    def run_trigger(self, trigger: Trigger, agent_name: str, change: Change, inputs: tuple[str, ...],
                    details: RunDetails) -> None:
        agent = self.host.live.agents.get(agent_name)
        write = trigger.write or (agent.write if agent else None)
        if agent is None or write is None:  # the agent went away (or lost its write) in a reload since
            log.error("trigger %s not run: agent %s is not loaded or has nowhere to write", trigger.id, agent_name)
            return
        journal = Journal()
        try:
            request = StepRequest(agent=agent, task=trigger.task or agent.task, write=write,
                                  inputs=inputs, trigger=f"trigger:{change.rel}",
                                  variables={"path": change.rel, "event": change.kind}, details=details)
            self.host.make_runner(journal).run_step(request)
        finally:
            journal.close()

