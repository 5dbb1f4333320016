"""The daemon's trials (issue 28): queued trials (`routine models try`) run only inside the
`trials: {window}` of routine.yaml, one at a time, through the work queue and the daemon's one
model manager (so `max_resident` and the day's residency plan hold), and never while work is
queued or running or a scheduled block is due within `trials.clear`. A trial a stop cut short
is queued again at the next start (it had stored nothing). After each, `Routine/Models.md`.
When no model trial waits, the queued variants of agent notes (issue 40: a weekly step's advice,
`routine agent try` while the daemon runs) are tried the same way, on the agent's own model.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Callable
from zoneinfo import ZoneInfo

from routine.daemon.live import Live
from routine.daemon.work import Work, WorkQueue
from routine.errors import RoutineError
from routine.host import supervise
from routine.journal import Journal
from routine.journal.prompt_trials import PromptTrialQueue, QueuedVariant
from routine.journal.slots import Slots
from routine.journal.trials import Trial, Trials
from routine.models.plan import alias_key, upcoming_uses
from routine.person.alerts import raise_alert
from routine.schedule import due
from routine.trials.scores import scores, write_note

if TYPE_CHECKING:
    from routine.models.client import ModelClient

log = logging.getLogger(__name__)

IDLE_SECONDS = 60.0  # between looks when nothing may start (a queue change or a clock jump wakes it sooner)
BUSY_SECONDS = 5.0   # between looks while other work runs inside the window


class NightTrials:
    """``live``: the config in force; ``queue``: the daemon's work queue; ``client``: its model
    client (its one manager); ``now``: the daemon's clock, in the person's time zone."""

    def __init__(self, live: Live, queue: WorkQueue, client: Callable[[], ModelClient | None],
                 now: Callable[[], datetime]):
        self.live, self.queue, self.client, self.now = live, queue, client, now
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._inflight = threading.Event()
        self._journal: Journal | None = None
        self._thread: supervise.Supervised | None = None
        self._waiting: str | None = None  # why trials wait, as last logged
        self._asked = threading.Event()  # `--now`: what is queued runs outside the window, when the box allows

    def start(self) -> None:
        self._journal = Journal()
        again = Trials(self._journal.db).requeue_running() + PromptTrialQueue(self._journal.db).requeue_running()
        if again:
            log.info("%d trial(s) cut short by the last stop are queued again", again)
        self._thread = supervise.start("trials", self._loop, self._stop)

    def halt(self) -> None:
        self._stop.set()
        self._wake.set()

    def stop(self) -> None:
        if self._thread is not None:
            self._thread.thread.join(5)
        if self._journal is not None:
            self._journal.close()

    def poke(self) -> None:
        """Look again now (the queue changed, the clock moved)."""
        self._wake.set()

    def run_now(self) -> str | None:
        """`models try --now`, `agent try --now` while the daemon runs: the queued trials start
        now, outside the trials window, one at a time as always, once no work runs and no block is
        due within `trials.clear` (residency allows); returns why they wait, or None."""
        why = self.busy(self.now())  # before the poke: the trial it starts is no reason to wait
        self._asked.set()
        self.poke()
        return why

    def _loop(self) -> None:
        while not self._stop.is_set():
            wait = self.tick()
            self._wake.wait(wait)
            self._wake.clear()

    def tick(self) -> float:
        """Start the next trial when it may; the seconds until it is worth looking again."""
        if self._inflight.is_set() or self._journal is None:
            return IDLE_SECONDS
        now = self.now()
        config = self.live.config
        if not config.trials.open_at(now.time()) and not self._asked.is_set():
            return IDLE_SECONDS
        why = self.busy(now)
        if why is not None:
            if why != self._waiting:  # said once per reason, not once per look
                log.info("trials wait: %s", why)
            self._waiting = why
            return BUSY_SECONDS
        self._waiting = None
        trial = Trials(self._journal.db).claim()
        if trial is not None:
            self._submit(f"trial of {trial.candidate} on run {trial.run}", partial(self._run, trial),
                         alias_key(config, trial.candidate))
            return IDLE_SECONDS
        variant = PromptTrialQueue(self._journal.db).claim()
        if variant is not None:  # a changed agent note, on the agent's own model
            agent = self.live.agents.get(variant.agent)
            self._submit(f"prompt trial of {variant.agent} ({variant.origin})", partial(self._run_variant, variant),
                         alias_key(config, agent.model) if agent is not None else None)
        else:
            self._asked.clear()  # everything asked for now was tried: the window rules again
        return IDLE_SECONDS

    def _submit(self, label: str, run: Callable[[], None], key: tuple[str, str] | None) -> None:
        self._inflight.set()
        self.queue.submit(Work(key="trials", label=label, run=run, models=(key,) if key else ()))

    def busy(self, now: datetime) -> str | None:
        """Why no trial may start now (work queued or running, a block owing a run now or due
        soon), else None."""
        snapshot = self.queue.snapshot()
        if snapshot.running or snapshot.queued:
            return f"work in the queue ({', '.join((*snapshot.running, *snapshot.queued))})"
        live = self.live
        zone = ZoneInfo(live.config.zone_name())
        owing = self._owing(now, zone)
        if owing is not None:
            return owing
        clear = timedelta(seconds=live.config.trials.clear)
        uses = upcoming_uses(live.config, live.agents, live.schedules.blocks.values(), now, now + clear, zone)
        if uses:
            return f"{uses[0].block} is due at {uses[0].at.astimezone(now.tzinfo):%H:%M}"
        return None

    def _owing(self, now: datetime, zone: ZoneInfo) -> str | None:
        """A block whose slot came due and is not claimed yet (its timer fires a moment late on a
        busy box): the slot is past, so no longer "due soon", and not yet in the queue. The rule
        of what a block owes is ``schedule.due``'s; the timer claims the slot within moments."""
        if self._journal is None:
            return None
        slots = Slots(self._journal.db)
        for block in self.live.schedules.blocks.values():
            for slot in due.owed(block, slots, now, zone).run:
                return f"{block.id} is due now (its {slot.at.astimezone(now.tzinfo):%H:%M} slot has not started)"
        return None

    def _run(self, trial: Trial) -> None:
        from routine.trials.queue import run_claimed  # lazy: jsonschema, which the tools' declarations load

        def run(journal: Journal, client: ModelClient) -> None:
            run_claimed(self.live.config, self.live.agents, journal, client, trial)
            write_note(self.live.config, scores(self.live.config, Trials(journal.db).all()))

        self._trying(f"trial {trial.id}", run, lambda journal, error: None)

    def _run_variant(self, variant: QueuedVariant) -> None:
        """A queued variant of an agent note tried; proposed when it did better (routine.trials.advice)."""
        from routine.trials.advice import run_queued  # lazy: jsonschema, which the tools' declarations load

        def run(journal: Journal, client: ModelClient) -> None:
            run_queued(self.live.config, self.live.agents, journal, client, variant, self.now())
            PromptTrialQueue(journal.db).end(variant.id)

        def failed(journal: Journal, error: str) -> None:  # the advice is lost unless the person hears of it
            raise_alert(self.live.config, self.now(), "change not tried",
                        f"The change to {variant.agent} ({variant.origin}) was not tried: {error}",
                        "make the change by hand if you still want it, or try a copy of the agent note with "
                        f"`routine agent try {variant.agent} --variant NOTE`.", agent=variant.agent)
            PromptTrialQueue(journal.db).end(variant.id, error)  # after the alert: the row ends once it is said

        self._trying(f"prompt trial of {variant.agent} ({variant.origin})", run, failed)

    def _trying(self, what: str, run: Callable[[Journal, ModelClient], None],
                failed: Callable[[Journal, str], None]) -> None:
        """``run`` on a journal of its own and the daemon's model client; a failure logged and
        handed to ``failed``; then the next trial may start."""
        journal = Journal()
        try:
            client = self.client()
            if client is None:
                raise RoutineError("The daemon has no model manager.", "restart the daemon.")
            run(journal, client)
        except RoutineError as exc:
            log.error("%s: %s", what, exc.message)
            failed(journal, exc.message)
        finally:
            journal.close()
            self._inflight.clear()
            self.poke()
