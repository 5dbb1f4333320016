"""APScheduler 3 as the timer: one in-memory job per block, waking the daemon at its slots.

APScheduler only says "block X may be due now". What is owed (run, catch up, or record as
missed) is decided by ``routine.schedule.due`` from the slot records, so a timer firing twice,
late, or after a restart can never run a slot twice.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Callable, TypedDict
from zoneinfo import ZoneInfo

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger

from routine.schedule.cron import Cron
from routine.schedule.model import Block

log = logging.getLogger(__name__)

_on_due: Callable[[str], None] | None = None  # set by the running daemon; jobs are pickled by reference


def block_due(block_id: str) -> None:
    """The job's target (referenced by name, so a timer never holds the daemon itself)."""
    if _on_due is not None:
        _on_due(block_id)


class _TriggerState(TypedDict):
    """A ``CronSlotTrigger`` as pickled."""

    version: int
    expr: str
    tz: str


class CronSlotTrigger(BaseTrigger):  # type: ignore[misc]  # APScheduler 3 ships no types
    """Our DST-correct cron (routine.schedule.cron) as an APScheduler trigger.

    ``offset``: how far the daemon's clock is ahead of the system clock (a test's driven clock,
    ``daemon.clock``; else none). APScheduler waits in system time, so a slot of the daemon's
    clock is planned at the system instant when that clock reaches it."""

    def __init__(self, expr: str, tz: str, offset: Callable[[], timedelta] | None = None):
        self.expr = expr
        self.tz = tz
        self.offset = offset

    def get_next_fire_time(self, previous_fire_time: datetime | None, now: datetime) -> datetime | None:
        shift = self.offset() if self.offset else timedelta(0)
        after = previous_fire_time if previous_fire_time and previous_fire_time > now else now
        fire = Cron.parse(self.expr).next_after(after + shift, ZoneInfo(self.tz))
        return fire - shift if fire is not None else None

    def __getstate__(self) -> _TriggerState:
        return {"version": 1, "expr": self.expr, "tz": self.tz}

    def __setstate__(self, state: _TriggerState) -> None:
        self.expr, self.tz = state["expr"], state["tz"]

    def __str__(self) -> str:
        return f"cron[{self.expr} {self.tz}]"


class AtTrigger(BaseTrigger):  # type: ignore[misc]  # APScheduler 3 ships no types
    """One moment of the daemon's clock (a reminder's, ``daemon.timed_reminders``), planned at the
    system instant that clock reaches it (``offset``, as ``CronSlotTrigger``); then no more."""

    def __init__(self, at: datetime, offset: Callable[[], timedelta] | None = None):
        self.at = at
        self.offset = offset

    def get_next_fire_time(self, previous_fire_time: datetime | None, now: datetime) -> datetime | None:
        if previous_fire_time is not None:
            return None
        return self.at - (self.offset() if self.offset else timedelta(0))

    def __str__(self) -> str:
        return f"at[{self.at.isoformat()}]"


BLOCK_JOB = "block:"  # a block's job id begins so; a one-shot's (``at``) with its own prefix


class Timers:
    """The jobs live in memory: what a block owes after a restart comes from the slot records
    (``schedule.due``), so the timers keep nothing on disk and a full state disk cannot stop them."""

    def __init__(self, on_due: Callable[[str], None], local_tz: str, offset: Callable[[], timedelta] | None = None):
        global _on_due
        _on_due = on_due
        self.local_tz = local_tz
        self.offset = offset  # the daemon's clock ahead of the system's (a test's driven clock)
        self.scheduler = BackgroundScheduler(
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
            timezone=ZoneInfo(local_tz),
        )

    def start(self) -> None:
        self.scheduler.start()

    def sync(self, blocks: dict[str, Block]) -> None:
        """Make the jobs match the blocks in force: add, update, remove."""
        wanted = {f"{BLOCK_JOB}{b.id}": b for b in blocks.values() if b.enabled and b.timed}
        for job in self.scheduler.get_jobs():
            if job.id.startswith(BLOCK_JOB) and job.id not in wanted:
                self.scheduler.remove_job(job.id)
                log.info("removed timer %s", job.id)
        for job_id, block in wanted.items():
            trigger = CronSlotTrigger(block.cron.expr, block.timezone or self.local_tz, self.offset)
            existing = self.scheduler.get_job(job_id)
            if existing and str(existing.trigger) == str(trigger):
                continue
            self.scheduler.add_job("routine.daemon.timers:block_due", trigger=trigger, args=[block.id],
                                   id=job_id, name=block.id, replace_existing=True)
            log.info("timer %s: %s", job_id, trigger)

    def at(self, job_id: str, when: datetime, callback: Callable[[], None]) -> None:
        """Call ``callback`` once, when the daemon's clock reaches ``when`` (at once if it has);
        a job of that id planned before is replaced."""
        self.scheduler.add_job(callback, trigger=AtTrigger(when, self.offset), id=job_id, name=job_id,
                               replace_existing=True)

    def one_shots(self, prefix: str) -> set[str]:
        """The ids of the one-shot jobs still planned whose id begins with ``prefix``."""
        return {job.id for job in self.scheduler.get_jobs() if job.id.startswith(prefix)}

    def cancel(self, job_id: str) -> None:
        try:
            self.scheduler.remove_job(job_id)
        except JobLookupError:  # fired (and gone) meanwhile, or never planned
            pass

    def replan(self) -> None:
        """The daemon's clock jumped (a test drove it): every job's next slot, planned again."""
        for job in self.scheduler.get_jobs():
            self.scheduler.reschedule_job(job.id, trigger=job.trigger)

    def next_fires(self) -> dict[str, datetime]:
        shift = self.offset() if self.offset else timedelta(0)
        return {job.name: job.next_run_time + shift for job in self.scheduler.get_jobs()
                if job.next_run_time and job.id.startswith(BLOCK_JOB)}

    def alive(self) -> bool:
        thread = getattr(self.scheduler, "_thread", None)  # BackgroundScheduler's own thread
        return self.scheduler.running and (thread is None or thread.is_alive())

    def stop(self) -> None:
        global _on_due
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        _on_due = None
