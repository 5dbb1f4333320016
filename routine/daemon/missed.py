"""What a block owes, accounted for: slots past their grace each journaled (``missed``, or
``skipped`` when paused or the block says ``missed: skip``) with one alert for the person unless
the block skips them; slots on time or within grace claimed and handed on to run."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Callable
from zoneinfo import ZoneInfo

from routine.config.model import Config
from routine.journal import Journal
from routine.journal.slots import Slots
from routine.journal.status import Skip
from routine.person.alerts import raise_alert
from routine.schedule import due
from routine.schedule.model import Block

log = logging.getLogger("routine.daemon")


def record_missed(journal: Journal, slots: Slots, block: Block, slot: due.Slot, paused: bool = False,
                  now_local: datetime | None = None) -> None:
    """A slot that will not run, journaled: ``skipped`` when paused or the block skips, else ``missed``."""
    state = "skipped" if paused or block.missed == "skip" else "missed"
    details = {"skipped": Skip.PAUSED if paused else Skip.MISSED} if state == "skipped" else None
    run_id = journal.record(agent=None, trigger="schedule", status=state, error=slot.reason,
                            kind="block", block=block.id, slot=slot.key, details=details, id_at=now_local)
    slots.set(block.id, slot.key, state, run_id=run_id, reason=slot.reason)
    log.warning("block %s slot %s %s", block.id, slot.key, slot.reason)


def alert_missed(config: Config, now: datetime, block: Block, owed: due.Owed, absent: str | None = None) -> None:
    if block.missed == "skip":
        return  # the person chose to skip missed runs: journaled, not alarming
    zone = ZoneInfo(config.zone_name())
    times = ", ".join(f"{s.at.astimezone(zone):%a %d %b %H:%M}" for s in owed.missed[-5:])
    extra = f" (and {owed.not_recorded} earlier)" if owed.not_recorded else ""
    raise_alert(config, now, f"{block.id} missed",
                f"The block {block.id} did not run at {times}{extra}: {absent or 'the daemon was not running'} then, "
                f"and those times are beyond the block's grace of {block.grace}.",
                "nothing to do unless this keeps happening; `routine fire " + block.id + "` runs it now.")


def account(journal: Journal, slots: Slots, config: Config, now_local: datetime, block: Block, owed: due.Owed,
            absent: str | None, submit: Callable[[Block, due.Slot, str], None]) -> None:
    """Every slot of ``owed``: paused and missed ones recorded (and alerted), the rest claimed and submitted."""
    for slot in owed.paused:
        record_missed(journal, slots, block, slot, paused=True, now_local=now_local)
    for slot in owed.missed:
        record_missed(journal, slots, block, slot, now_local=now_local)
    if owed.missed:
        alert_missed(config, now_local, block, owed, absent)
    for slot in owed.run:
        if slots.claim(block.id, slot.key):
            submit(block, slot, "schedule" if slot.reason == "on time" else "catch-up")
