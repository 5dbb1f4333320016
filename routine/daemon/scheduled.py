"""The daemon's scheduled work: which slots a block owes (run, caught up, missed or paused), each
claimed slot queued and run, its outcome recorded and announced, and the runner every run of the
daemon uses (the shared model manager, the write gate, the run's events).

``ScheduledWork`` is mixed into ``routine.daemon.app.Daemon``; the attributes it uses are the
daemon's own, declared below.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable
from zoneinfo import ZoneInfo

from routine.causes import is_disk_full
from routine.daemon.gate import WriteGate
from routine.daemon.live import Live
from routine.daemon.missed import account
from routine.daemon.ready import ready
from routine.daemon.work import Work, WorkQueue
from routine.flows.step_setup import STEP_SETUP
from routine.journal import Journal
from routine.journal.slots import Slots
from routine.journal.status import RunStatus, succeeded
from routine.models.plan import alias_key
from routine.runner.block import run_block
from routine.runner.step import Runner, local_time
from routine.schedule import chains, due, pause
from routine.statedb import is_busy

if TYPE_CHECKING:
    from routine.daemon.recovery import Recovery
    from routine.daemon.residency import Residency
    from routine.daemon.run_events import RunEvents
    from routine.daemon.vault_events import VaultEvents
    from routine.memory.remote import RemoteIndex
    from routine.models.client import ModelClient
    from routine.models.plan import ModelKey
    from routine.runner.block import BlockOutcome
    from routine.runner.events import OnEvent
    from routine.schedule.model import Block

log = logging.getLogger(__name__)

LOOK_AGAIN_SECONDS = 5.0  # after the journal was too busy to claim a block's slot


class ScheduledWork:
    live: Live
    clock: Callable[[], datetime]
    journal: Journal
    slots: Slots
    queue: WorkQueue
    state_dir: Path
    stopping: threading.Event
    abandon: threading.Event  # set at shutdown: no step may write after this
    write_gate: threading.Lock
    due_lock: threading.Lock
    recovery: Recovery
    residency: Residency | None
    run_events: RunEvents
    memory: RemoteIndex | None
    vault_events: VaultEvents | None

    @property
    def models(self) -> ModelClient | None:
        return self.residency.client if self.residency else None

    def zone_name(self) -> str:
        return self.live.config.zone_name()

    def now_local(self) -> datetime:
        return self.clock().astimezone(ZoneInfo(self.zone_name()))

    def on_due(self, block_id: str, now: datetime | None = None) -> None:
        """A block may owe runs: run what is on time or within grace; record every other slot.
        When the state disk is full nothing can be recorded: the block is accounted for once
        it has room again (``daemon.recovery``)."""
        with self.due_lock:
            block = self.live.schedules.blocks.get(block_id)
            if block is None or self.stopping.is_set():
                return
            try:
                self._owe(block, now or self.clock())
            except (OSError, sqlite3.Error) as exc:
                if is_busy(exc):  # held past the journal's patience: its slots are looked at again shortly
                    self._look_again(block_id, exc)
                    return
                if not is_disk_full(exc):
                    raise
                self.recovery.could_not_record(block_id, exc)

    def _look_again(self, block_id: str, exc: BaseException) -> None:
        """A block whose slots could not be read or claimed (the journal locked for longer than its
        writes wait): asked again in ``LOOK_AGAIN_SECONDS``, so an on-time slot runs a little late
        instead of being found missed at the block's next time."""
        log.warning("block %s: the run journal was busy (%s); its due runs are looked at again in %.0f s",
                    block_id, exc, LOOK_AGAIN_SECONDS)
        self.recovery.journal_busy(block_id, exc)
        timer = threading.Timer(LOOK_AGAIN_SECONDS, self.on_due, (block_id,))
        timer.daemon = True
        timer.start()

    def _owe(self, block: Block, now: datetime) -> None:
        absent = self.recovery.absent_reason(block.id)
        held = pause.holder(self.state_dir, self.live.config.holiday, block.id, ZoneInfo(self.zone_name()))
        owed = due.owed(block, self.slots, now, ZoneInfo(self.zone_name()),
                        **({"absent": absent} if absent else {}), paused=held)
        account(self.journal, self.slots, self.live.config, self.now_local(), block, owed, absent, self.submit_slot)
        self.recovery.accounted(block.id)

    def submit_slot(self, block: Block, slot: due.Slot, trigger: str) -> None:
        """Queue a claimed slot's run."""
        work = Work(key=f"block:{block.id}", label=f"{block.id} @ {slot.key}", models=self.model_keys(block.agents))
        work.run = partial(self._run_block, block.id, slot, trigger, work)
        self.queue.submit(work)

    def _run_block(self, block_id: str, slot: due.Slot, trigger: str, work: Work | None = None) -> None:
        block = self.live.schedules.blocks.get(block_id)
        if block is None:  # removed by a reload while it waited
            self.slots.set(block_id, slot.key, "skipped", reason="the block was removed from the schedule")
            return
        journal = None
        try:
            self.slots.set(block_id, slot.key, "running")
            journal = Journal()
            runner = self.make_runner(journal, work=work)
            outcome = run_block(runner, block, self.live.agents, trigger=trigger, slot=slot.key)
        except (OSError, sqlite3.Error) as exc:
            if not is_disk_full(exc):
                log.exception("block %s crashed", block_id)
                self.recovery.crashed(block_id, slot, journal, exc)
                return
            self.recovery.run_not_recorded(block_id, slot, exc)
            return
        except Exception as exc:  # a bug in routine: the slot must not stay "running" with nothing said
            log.exception("block %s crashed", block_id)
            self.recovery.crashed(block_id, slot, journal, exc)
            return
        finally:
            if journal is not None:
                journal.close()
        if not self.abandon.is_set() and outcome.status is RunStatus.WAITING:  # a step asked the person: the
            self.slots.set(block_id, slot.key, "done", run_id=outcome.run_id)  # slot ran; the answer resumes it
            return
        if not self.abandon.is_set():
            self.slots.set(block_id, slot.key, "done" if succeeded(outcome.status) else "failed", run_id=outcome.run_id)
            ready(self.live.config, block_id, slot.key, outcome, self.clock())
            if not succeeded(outcome.status):
                self.recovery.failed(block_id, slot, outcome, trigger)
            else:
                self.recovery.ran_through(block_id)
            self.follow(block_id, outcome)

    def follow(self, block_id: str, outcome: BlockOutcome) -> None:
        """Queue, once each, the blocks chained `after:` this run of ``block_id`` (or a step of it)."""
        if outcome.run_id is None or self.abandon.is_set() or outcome.status is RunStatus.WAITING:
            return  # a block that waits on the person is followed once it has ended
        ended_well = succeeded(outcome.status)
        for block in chains.followers(self.live.schedules.blocks, block_id, list(outcome.outputs), ended_well):
            work = Work(key=f"block:{block.id}", label=f"{block.id} after {outcome.run_id}",
                        models=self.model_keys(block.agents))
            work.run = partial(self._run_chained, block.id, outcome, work)
            self.queue.submit(work)

    def _run_chained(self, block_id: str, upstream: BlockOutcome, work: Work) -> None:
        block = self.live.schedules.blocks.get(block_id)
        if block is None:
            return
        trigger = f"after:{upstream.run_id}"
        journal = Journal()
        try:
            held = pause.holder(self.state_dir, self.live.config.holiday, block.id, ZoneInfo(self.zone_name()))
            why = held(self.clock())
            if why:  # paused: journaled like a paused slot, so the person sees the review did not run
                journal.record(agent=None, trigger=trigger, status="skipped", error=why, kind="block", block=block.id,
                               id_at=self.now_local())
                return
            outcome = run_block(self.make_runner(journal, work=work), block, self.live.agents, trigger=trigger,
                                upstream=upstream.outputs)
        finally:
            journal.close()
        self.follow(block_id, outcome)

    def model_keys(self, agent_names: Iterable[str], alias: str | None = None) -> tuple[ModelKey, ...]:
        """The models a job needs: its agents' own, or the one alias it runs on instead (`--model`)."""
        if alias is not None:
            key = alias_key(self.live.config, alias)
            return (key,) if key is not None else ()
        return self.residency.keys_for_agents(agent_names) if self.residency else ()

    def make_runner(self, journal: Journal, on_event: OnEvent | None = None, work: Work | None = None,
                    cancel: threading.Event | None = None) -> Runner:
        """A runner on the shared model manager. With ``work``, the job's model set follows its
        block: the steps still to come are what the forecast counts as needed now."""
        config = self.live.config
        runner = Runner(config, journal, models=self.models, clock=lambda: local_time(config, self.clock()),
                        on_event=self.run_events.listener(work, on_event), memory=self.memory, setup=STEP_SETUP)
        runner.write_gate = partial(self._gate, cancel)
        runner.pause = lambda seconds: not self.stopping.wait(seconds)  # a retry's wait ends at a stop
        return runner

    def _runs_finished(self) -> None:
        if self.vault_events and self.vault_events.graph_feed:
            self.vault_events.graph_feed.runs_finished()  # the graph reads what the run read and wrote

    def _gate(self, cancel: threading.Event | None = None) -> WriteGate:
        """Held by a step while it writes; refuses once shutdown has abandoned running steps, or
        the person called this run off (``cancel``)."""
        return WriteGate(self.write_gate, self.abandon, cancel)

