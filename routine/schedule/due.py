"""Deciding what a block owes: one rule for a timer firing on time, a restart after downtime,
and a crash mid-run.

For each block, every slot since the last one it has a record of (or since the daemon first
knew the block) is due. The latest due slot runs if it is on time, or, under
`missed: catch-up`, if it is within `grace`; every other due slot is recorded as `missed`
(or `skipped` under `missed: skip`). Interrupted slots are due again under the same rule.
Pure functions of (block, slot records, now): tested with an injected clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from routine.durations import human
from routine.journal.slots import Slots
from routine.schedule.cron import slot_key
from routine.schedule.model import Block

# A timer that fires a little late (busy box, scheduler wake-up) is still on time.
ON_TIME = timedelta(minutes=2)
# After a long downtime a per-minute block would owe thousands of rows; record this many.
MAX_MISSED_ROWS = 60


@dataclass(frozen=True)
class Slot:
    block: str
    at: datetime  # aware
    key: str
    reason: str  # why it runs, or why it does not


@dataclass
class Owed:
    run: list[Slot]
    missed: list[Slot]  # recorded as missed (or skipped), with the reason
    not_recorded: int = 0  # missed slots beyond MAX_MISSED_ROWS, counted in one line
    paused: list[Slot] = field(default_factory=list)  # recorded as skipped: paused (no alert)


def key_to_time(key: str) -> datetime:
    return datetime.strptime(key, "%Y-%m-%dT%H:%MZ").replace(tzinfo=timezone.utc)


def owed(block: Block, slots: Slots, now: datetime, default_tz: ZoneInfo,
         absent: str = "the daemon was not running", paused: Callable[[datetime], str | None] | None = None) -> Owed:
    """``absent``: why slots went unrecorded (said in each missed row's reason). ``paused``: why a
    slot at that time is held (``schedule.pause.reason``), or None; a held slot, on time or not,
    moves to ``Owed.paused`` with that reason."""
    tz = ZoneInfo(block.timezone) if block.timezone else default_tz
    last = slots.last_slot(block.id)
    since = key_to_time(last) if last else datetime.fromisoformat(slots.seen_since(block.id, now))
    candidates = [(at, "scheduled") for at in block.cron.between(since, now, tz)]
    candidates += [(key_to_time(k), "interrupted") for k in slots.interrupted(block.id)]
    candidates.sort(key=lambda c: c[0])
    result = Owed(run=[], missed=[])
    if not candidates or not block.enabled:
        return result
    *older, (latest, why) = candidates
    late = now - latest
    if late <= ON_TIME:
        result.run.append(
            Slot(block.id, latest, slot_key(latest), "interrupted, run again" if why == "interrupted" else "on time")
        )
    elif block.missed == "catch-up" and late <= block.grace:
        what = "interrupted, run again" if why == "interrupted" else "catch-up"
        result.run.append(
            Slot(block.id, latest, slot_key(latest), f"{what}: {_human(late)} late, within grace {_human(block.grace)}")
        )
    else:
        older.append((latest, why))
    for at, why in older[-MAX_MISSED_ROWS:]:
        result.missed.append(
            Slot(block.id, at, slot_key(at), _miss_reason(block, at, now, why, bool(result.run), absent))
        )
    result.not_recorded = max(0, len(older) - MAX_MISSED_ROWS)
    return _held(result, paused) if paused else result


def _held(result: Owed, paused: Callable[[datetime], str | None]) -> Owed:
    """Slots a pause or a holiday holds are neither run nor missed: skipped, with the reason."""
    kept: dict[str, list[Slot]] = {"run": [], "missed": []}
    held = []
    for name, slots in (("run", result.run), ("missed", result.missed)):
        for slot in slots:
            why = paused(slot.at)
            if why:
                held.append(Slot(slot.block, slot.at, slot.key, why))
            else:
                kept[name].append(slot)
    held.sort(key=lambda slot: slot.at)
    return Owed(run=kept["run"], missed=kept["missed"], not_recorded=result.not_recorded, paused=held)


def _miss_reason(block: Block, at: datetime, now: datetime, why: str, later_runs: bool, absent: str) -> str:
    what = "was interrupted by a crash or stop" if why == "interrupted" else f"was due while {absent}"
    if block.missed == "skip":
        return f"skipped: {what}, and the block's policy is `missed: skip`"
    if later_runs:
        return f"missed: {what}; a later slot of the block runs instead"
    return f"missed: {what}, and it is {_human(now - at)} late, beyond grace {_human(block.grace)}"


_human = human
