"""`routine run`: the daemon. Its parts, the due-slot logic, hot reload, shutdown.

Start-up: config (fatal if invalid), then the parts of ``Daemon.components`` in order: journal
(interrupted runs marked) → model manager and preloader → work queue (what is owed since last
time: catch-up or missed) → timers → search index (in a worker process that exits when idle;
checked, rebuilt if damaged, brought level with the vault, in the background) → config watcher →
vault watcher (changes made while down fire first; the index follows it) → questions (answered while
down: resumed; the soonest deadline armed, ``daemon.questions``) → control socket →
answers (``daemon.replies``: the readers of ntfy's or Telegram's answers, when configured) →
health monitor → trials (``daemon.trials``: queued trials of other models, in their window) →
first publish (STATUS line, dashboard note, metrics textfile) and ``READY=1`` → watchdog pings (only while healthy, see
``daemon.health``) → publisher thread. A part that fails to start stops those before it.
Shutdown (SIGTERM/SIGINT): ``STOPPING=1``; every part halted in reverse (no new work; the
running step may finish for a short while, else it is abandoned without writing and recorded),
then every part stopped in reverse (dashboard says stopped, socket closed, index closed, our
models unloaded, journal closed); exit 0.
"""

from __future__ import annotations

import faulthandler
import logging
import signal
import threading
import time
from datetime import datetime, timezone
from functools import partial
from typing import TYPE_CHECKING, Callable

from routine import paths
from routine.causes import is_disk_full
from routine.daemon import health
from routine.daemon.clock import driven_clock
from routine.daemon.components import Component, Components, if_there
from routine.daemon.control import ControlServer
from routine.daemon.live import Live
from routine.daemon.monitor import Monitor
from routine.daemon.notify import Notifier, Watchdog
from routine.daemon.publish import Publisher
from routine.daemon.questions import QuestionKeeper
from routine.daemon.recovery import Recovery
from routine.daemon.reload import ConfigWatcher
from routine.daemon.replies import Replies
from routine.daemon.residency import Residency
from routine.daemon.run_events import RunEvents
from routine.daemon.scheduled import ScheduledWork
from routine.daemon.signals import SignalPipe
from routine.daemon.status import resident_models, snapshot
from routine.daemon.status_record import status_line
from routine.daemon.timed_reminders import TimedReminders
from routine.daemon.trials import NightTrials
from routine.daemon.vault_events import VaultEvents
from routine.daemon.webhook import Webhook
from routine.daemon.work import WorkQueue
from routine.errors import RoutineError
from routine.host import supervise, sysmetrics
from routine.journal import Journal
from routine.journal.slots import Slots
from routine.memory.remote import RemoteIndex
from routine.person import agenda
from routine.person.alerts import raise_alert, resolve_alerts
from routine.schedule import held
from routine.vault.atomic import sweep_temp_files

if TYPE_CHECKING:
    from routine.config.model import Config
    from routine.daemon.status_record import ResidentModel
    from routine.daemon.timers import Timers
    from routine.schedule.held import HeldTrigger

log = logging.getLogger("routine.daemon")

STOP_GRACE_SECONDS = 20.0
INDEX_STOP_SECONDS = 10.0  # STOP_GRACE + this stays well inside TimeoutStopSec=60s
CONFIG_REJECTED = "config-rejected"  # the cause of the alert a rejected edit raises, resolved by a good reload
STOP_REPORT_SECONDS = 45.0  # a stop still going then has its threads' stacks logged


class Daemon(ScheduledWork):
    def __init__(self, config_arg: str | None = None, clock: Callable[[], datetime] | None = None, workers: int = 2):
        self.live = Live(config_arg)
        self.driven = driven_clock()  # a test's clock (ROUTINE_TEST_CLOCK, daemon.clock); else None
        self.clock = clock or (self.driven.now if self.driven else lambda: datetime.now(timezone.utc))
        self.journal = Journal()
        self.slots = Slots(self.journal.db)
        self.queue = WorkQueue(workers, on_change=self._changed)
        self.stopping = threading.Event()
        self.abandon = threading.Event()  # set at shutdown: no step may write after this
        self.write_gate = threading.Lock()
        self.due_lock = threading.Lock()  # held while due slots are decided (health probes it)
        self.timers: Timers | None = None
        self.state_dir = paths.state_dir()
        self.control: ControlServer | None = None
        self.watcher: ConfigWatcher | None = None
        self.started_at = time.time()
        self.residency: Residency | None = None  # routine.daemon.residency: the one model manager of this process
        # routine.daemon.vault_events: the watcher, triggers, approvals, the index feed
        self.vault_events: VaultEvents | None = None
        self.memory: RemoteIndex | None = None  # the vault search index, in a worker process (its one writer)

        self.notifier = Notifier.from_environment()  # systemd's notify socket, when it gave one
        self.watchdog = Watchdog(self.notifier, lambda: health.problems(self), on_change=self._changed)
        self.publisher = Publisher(self.live, self.now_local, self.notifier, partial(snapshot, self),
                                   lambda: self.watchdog.problems if self.watchdog.running else None)
        self.monitor = Monitor(self)      # what the daemon depends on, checked; alerts resolved
        self.recovery = Recovery(self)    # slots owed after a full disk or an outage
        self.run_events = RunEvents(self.model_keys, self.monitor.poke, self._runs_finished)
        # Questions agents asked the person: deadlines armed, answers resume their blocks (issue 45)
        self.questions = QuestionKeeper(self)
        self.run_events.asked = self.questions.asked
        # Trials of other models, in the `trials:` window, when the box is idle (routine.daemon.trials)
        self.trials = NightTrials(self.live, self.queue, lambda: self.models, self.now_local)
        self.reminders = TimedReminders(self)  # one-shot reminders on the timers (routine.daemon.timed_reminders)
        self.webhook = Webhook(self)  # outside events over HTTP on loopback, when `events.listen` is set
        self.replies = Replies(self)  # the person's answers from the phone (routine.daemon.replies)
        self._resident: tuple[float, tuple[ResidentModel, ...] | None, str | None] | None = None
        self._parts = Components([])

    # --- lifecycle ---------------------------------------------------------------------------

    def components(self) -> list[Component]:
        """The daemon's parts in start order; a stop halts them all in reverse, then stops them
        all in reverse (``daemon.components``)."""
        return [
            Component("journal", self._recover, stop=self.journal.close),
            Component(
                "model manager", self._start_residency, stop=if_there(lambda: self.residency, lambda r: r.stop())
            ),
            Component("work queue", self._start_queue, halt=self._drain),
            Component("timers", self._start_timers, halt=self._stop_timers),
            Component("reminders", self.reminders.start, halt=self.reminders.stop),
            Component(
                "search index",
                self._open_memory,
                halt=if_there(lambda: self.memory, lambda m: m.interrupt()),
                stop=self._close_memory,
            ),
            Component("config watcher", self._watch_config, halt=if_there(lambda: self.watcher, lambda w: w.stop())),
            Component(
                "vault watcher",
                self._watch_vault,
                halt=if_there(lambda: self.vault_events, lambda v: v.stop_watching()),
                stop=if_there(lambda: self.vault_events, lambda v: v.close()),
            ),
            Component("questions", self.questions.start, halt=self.questions.stop),
            Component("control socket", self._open_control, stop=if_there(lambda: self.control, lambda c: c.stop())),
            Component("webhook", self.webhook.start, halt=self.webhook.stop),
            Component("answers", self.replies.start, halt=self.replies.stop),  # none configured: none run
            Component("health monitor", self.monitor.start, halt=self.monitor.stop),
            Component("trials", self.trials.start, halt=self.trials.halt, stop=self.trials.stop),
            Component("first publish", self._ready),
            Component("watchdog", self.watchdog.start, halt=self.watchdog.stop),
            Component(
                "publisher", self.publisher.start, halt=self.publisher.stop, stop=self.publisher.stopped
            ),  # the dashboard says it is no longer live
        ]

    def start(self) -> None:
        sysmetrics.cap_heap_arenas()  # before the components' threads: a level heap over weeks
        self._parts = Components(self.components())
        self._parts.start()
        log.info("routine daemon ready: %d blocks, %d triggers%s", len(self.live.schedules.blocks),
                 len(self.live.schedules.triggers),
                 f"; watchdog every {self.watchdog.interval:.1f}s" if self.watchdog.running else "")

    def _recover(self) -> None:
        """What the last stop left: temp files of an interrupted write, runs still 'running'."""
        vault = self.live.config.vault
        removed = sweep_temp_files(vault) if vault.is_dir() else []
        if removed:
            log.warning("removed %d temp file(s) left by an interrupted write: %s", len(removed), ", ".join(removed))
        interrupted = self.journal.mark_interrupted("the daemon stopped during this run")
        self.slots.mark_interrupted()
        if interrupted:
            log.warning("%d run(s) were interrupted by the last stop: %s", len(interrupted), ", ".join(interrupted))

    def _start_residency(self) -> None:
        self.residency = Residency(self.live, self.queue, self.clock)
        self.residency.start()

    def _start_queue(self) -> None:
        self.queue.start()
        for block_id in list(self.live.schedules.blocks):  # what is owed since last time
            self.on_due(block_id)

    def _drain(self) -> None:
        """Let the running step finish for a while; else abandon it (it writes nothing) and say so."""
        if self.queue.stop(STOP_GRACE_SECONDS):
            return
        with self.write_gate:  # after this, no running step can begin a write
            self.abandon.set()
        for run_id in self.journal.mark_interrupted("stopped by SIGTERM before the step finished; nothing was written"):
            log.warning("abandoned run %s at shutdown", run_id)
        self.slots.mark_interrupted()

    def _open_memory(self) -> None:
        self.memory = self._start_memory(self.live.config)

    def _close_memory(self) -> None:
        # A pass in progress stops after its batch, what it wrote stays; a worker that cannot stop
        # (loading the embedding model) is killed, so the stop stays within the unit's timeout.
        if self.memory:
            self.memory.close(timeout=INDEX_STOP_SECONDS)

    def _watch_config(self) -> None:
        self.watcher = ConfigWatcher(self.live.watched_paths(), self.reload)
        self.watcher.start()

    def _watch_vault(self) -> None:
        self.vault_events = VaultEvents(self)
        self.reminders.subscribe(self.vault_events.reactions)  # task lines' and chat notes' reminders
        self.vault_events.reminder_notes = lambda: frozenset(self.reminders.notes)
        self.vault_events.start()

    def _open_control(self) -> None:
        """Once the socket answers, the vault is watched and every timer is set."""
        self.control = ControlServer(self, partial(snapshot, self))
        self.control.start()

    def _ready(self) -> None:
        supervise.on_crash(self._changed)
        snap = self.publisher.publish()
        self.notifier.ready(status_line(snap, self.now_local().tzinfo) if snap else "ready")

    def serve_forever(self) -> int:
        signals = SignalPipe((signal.SIGTERM, signal.SIGINT, signal.SIGHUP))  # handled here, lock-free
        self.start()
        while (sig := signals.next()) == signal.SIGHUP:
            threading.Thread(target=self._hangup, name="reload", daemon=True).start()
        log.info("%s received", sig.name)
        return self.shutdown()

    def shutdown(self) -> int:
        log.info("stopping: no new work; waiting up to %.0fs for the running step", STOP_GRACE_SECONDS)
        # A stop that hangs says where: every thread's stack to stderr (the journal), before systemd's kill.
        faulthandler.dump_traceback_later(STOP_REPORT_SECONDS, exit=False)
        self.stopping.set()
        self.notifier.stopping()
        self._parts.stop()
        self.notifier.close()
        faulthandler.cancel_dump_traceback_later()
        return 0

    def _start_memory(self, config: Config) -> RemoteIndex:
        """The search index for ``config``: opened and reconciled in the background (a first
        build or a rebuild takes minutes; start-up does not wait for it, a search does)."""
        # In a worker process that exits when idle: this process never loads chromadb or a model.
        # The vault watcher feeds it (vault_events), so a search need not stat the vault.
        memory = RemoteIndex(config, models=self.residency.manager if self.residency else None)

        def bring_up() -> None:
            try:
                stats = memory.reconcile()
                log.info("search index ready: %d notes (%d added, %d changed, %d removed) in %.1fs",
                         stats.notes, stats.added, stats.changed, stats.removed, stats.seconds)
            except RoutineError as exc:  # stopping mid-pass is no error: the next start goes on from there
                (log.info if memory.stopping() else log.error)("search index: %s", exc)
            except Exception as exc:  # the daemon goes on without a current index; a search retries
                log.error("the search index could not be brought up to date: %s", exc,
                          exc_info=not is_disk_full(exc))  # a full disk is said in one line (and an alert)

        threading.Thread(target=bring_up, name="memory", daemon=True).start()
        return memory

    def _hangup(self) -> None:
        log.info("SIGHUP (systemctl reload): re-reading the config and schedules")
        self.reload()

    def reload(self) -> None:
        before, known = self.live.config, set(self.live.schedules.blocks)
        result = self.live.reload()
        if result.problems:
            msg = "\n".join(f"- {p}" for p in result.problems)
            raise_alert(self.live.config, self.now_local(), "config rejected",
                        f"These edits were rejected; the last good version stays in force:\n\n{msg}",
                        "correct the lines listed; `routine doctor` checks routine.yaml, "
                        "`routine schedule validate` the schedules.", cause=CONFIG_REJECTED)
        else:  # the edits that were rejected are fixed (or replaced): their alert is over
            resolve_alerts(self.live.config, self.now_local(), CONFIG_REJECTED, "the files now load as written.")
        if result.changed and self.residency:
            self.residency.reconfigure()
        self.replies.reconfigure()
        after = self.live.config
        if before.calendars != after.calendars:  # a fixed path: read now, so its alert resolves without `doctor`
            self._read_calendars(after)
        if self.memory and (before.vault, before.memory) != (after.vault, after.memory):
            old, self.memory = self.memory, self._start_memory(after)
            old.close()  # the new index waits for the old one's lock
        if before.holiday != after.holiday and self.vault_events is not None:
            self.vault_events.release_held()  # a holiday removed (or moved): what it held fires now
        if result.changed and self.timers:
            self.timers.sync(self.live.schedules.blocks)
            for block_id in set(self.live.schedules.blocks) - known:  # known from now: its first slot is owed
                self.on_due(block_id)
            log.info(
                "reloaded: %d blocks, %d triggers", len(self.live.schedules.blocks), len(self.live.schedules.triggers)
            )
        self._changed()

    def _read_calendars(self, config: Config) -> None:
        """Each calendar read once, off the reload's thread (a URL may be slow): one that reads
        resolves its alert, one no longer named has its alert resolved (``person.agenda.check``)."""
        def read() -> None:
            try:
                agenda.check(config, self.now_local())
            except Exception:  # a calendar that cannot be read keeps its alert; the next step says why
                log.exception("reading the calendars after a reload")

        threading.Thread(target=read, name="calendars", daemon=True).start()

    # --- state for systemd, the dashboard and `routine status` -------------------------------

    def timers_alive(self) -> bool:
        """The scheduler thread runs (or is not meant to: not started yet, or stopping)."""
        return self.timers is None or self.stopping.is_set() or self.timers.alive()

    def _start_timers(self) -> None:
        self.restart_timers()
        if self.driven:
            self.driven.watch(self._clock_moved)

    def _stop_timers(self) -> None:
        if self.driven:
            self.driven.stop()
        if self.timers:
            self.timers.stop()

    def _clock_moved(self) -> None:
        """A test drove the clock: the timers plan again, what came due is owed (as after a restart),
        and the monitor looks again (what its round measures by the clock: the keep-rate)."""
        if self.timers:
            self.timers.replan()
        self.monitor.poke()
        for block_id in list(self.live.schedules.blocks):
            self.on_due(block_id)
        if self.vault_events is not None:
            self.vault_events.release_held()  # a pause that ended on the moved clock releases what it held
        self.trials.poke()
        self.questions.arm()  # a deadline the clock passed is due now

    def restart_timers(self) -> None:
        """Start the timers, or start them again after their thread died (no restart needed)."""
        from routine.daemon.timers import Timers  # lazy: apscheduler, heavy, loads only when the timers start

        restarting = self.timers is not None
        if self.timers is not None:
            log.error("the scheduler thread is not running; starting it again")
            try:
                self.timers.stop()
            except Exception as exc:  # it is dead already; we only want its replacement
                log.warning("stopping the dead scheduler: %s", exc)
        self.timers = Timers(self.on_due, self.zone_name(), self.driven.offset if self.driven else None)
        self.timers.sync(self.live.schedules.blocks)
        self.timers.start()
        if restarting:
            for block_id in list(self.live.schedules.blocks):  # what came due while it was down
                self.on_due(block_id)
            self.reminders.plan()

    def recovered(self, cause_key: str) -> None:
        """The monitor saw a cause gone: account for and retry what it stopped."""
        self.recovery.recovered(cause_key)
        self._changed()

    def hold(self, item: HeldTrigger) -> bool:
        """Keep a run a pause holds (an outside event's, a project's pickup or reaction) until the hold
        ends; the vault's events fire it then (a restart does too). True if it is new."""
        if self.vault_events is not None:
            return self.vault_events.hold(item)
        return held.hold(paths.state_dir(), item)

    def changed(self) -> None:
        self._changed()

    def plan_reminders(self) -> None:
        """`routine remind` changed the reminders (another process): their timers are planned again."""
        self.reminders.plan()

    def trials_now(self) -> str | None:
        """The queued trials start now, outside their window, when residency allows: why they wait, or None."""
        return self.trials.run_now()

    def _changed(self) -> None:
        """Something the person can see changed (work queued or done, a reload, health)."""
        self._resident = None  # a run may have loaded a model
        self.publisher.poke()
        self.trials.poke()  # work done or queued: a trial may start, or must wait

    def resident_models(self, max_age: float = 20.0) -> tuple[tuple[ResidentModel, ...] | None, str | None]:
        """Models loaded now: (models, None), or (None, why not).

        The one place the daemon learns residency (asked from Ollama's /api/ps, briefly
        cached so status requests stay cheap); the model manager replaces its body with its
        view (``loaded_by``, ``in_use``).
        """

        cached = self._resident
        if cached is None or time.monotonic() - cached[0] > max_age:
            found, error = resident_models(self.live.config)
            if found is not None and self.residency is not None:
                found = self.residency.annotate(found)
            cached = self._resident = (time.monotonic(), found, error)
        return cached[1], cached[2]
