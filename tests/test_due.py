"""What a block owes after downtime, a crash or on time: injected clock, real SQLite."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from routine.config.model import StepSpec, WriteSpec
from routine.schedule.cron import Cron, slot_key
from routine.schedule.due import owed
from routine.schedule.model import Block

BERLIN = ZoneInfo("Europe/Berlin")
STEP = (StepSpec(agent="strategist", task="x", write=WriteSpec(note="Daily/x.md", section="A")),)


def block(cron="30 7 * * *", missed="catch-up", grace=timedelta(hours=2), id="morning") -> Block:
    return Block(id=id, file="daily.yaml", cron=Cron.parse(cron), timezone="Europe/Berlin", steps=STEP,
                 missed=missed, grace=grace)


def at(day, hh, mm=0, tz=BERLIN) -> datetime:
    return datetime(2026, 11, day, hh, mm, tzinfo=tz)


def test_on_time_slot_runs_once_and_is_not_owed_again(slots):
    b = block()
    slots.seen_since(b.id, at(20, 12))
    first = owed(b, slots, at(21, 7, 30), BERLIN)
    assert [s.key for s in first.run] == [slot_key(at(21, 7, 30))] and not first.missed
    assert slots.claim(b.id, first.run[0].key)
    assert not slots.claim(b.id, first.run[0].key)  # a second timer or process cannot take it
    slots.set(b.id, first.run[0].key, "done")
    again = owed(b, slots, at(21, 7, 31), BERLIN)
    assert not again.run and not again.missed


def test_catch_up_within_grace_runs_the_latest_slot(slots):
    b = block()
    slots.seen_since(b.id, at(20, 12))
    result = owed(b, slots, at(21, 9, 0), BERLIN)  # 90 min late, grace 2h
    assert [s.key for s in result.run] == [slot_key(at(21, 7, 30))]
    assert "catch-up" in result.run[0].reason


def test_beyond_grace_is_missed_with_reason(slots):
    b = block()
    slots.seen_since(b.id, at(20, 12))
    result = owed(b, slots, at(21, 10, 0), BERLIN)
    assert not result.run
    assert [s.key for s in result.missed] == [slot_key(at(21, 7, 30))]
    assert "beyond grace" in result.missed[0].reason


def test_long_downtime_runs_latest_within_grace_and_records_every_older_slot(slots):
    b = block()
    slots.seen_since(b.id, at(17, 12))
    result = owed(b, slots, at(21, 8, 0), BERLIN)
    assert [s.key for s in result.run] == [slot_key(at(21, 7, 30))]
    assert [s.key for s in result.missed] == [slot_key(at(d, 7, 30)) for d in (18, 19, 20)]
    assert all("a later slot" in s.reason for s in result.missed)


def test_skip_policy_never_catches_up(slots):
    b = block(missed="skip")
    slots.seen_since(b.id, at(20, 12))
    result = owed(b, slots, at(21, 7, 45), BERLIN)
    assert not result.run and "missed: skip" in result.missed[0].reason


def test_interrupted_slot_is_retaken_once_within_grace(slots):
    b = block()
    slots.seen_since(b.id, at(20, 12))
    key = slot_key(at(21, 7, 30))
    assert slots.claim(b.id, key)
    slots.set(b.id, key, "running")
    # kill -9 here; the next start marks it interrupted.
    slots.mark_interrupted()
    result = owed(b, slots, at(21, 7, 40), BERLIN)
    assert [s.key for s in result.run] == [key] and "interrupted" in result.run[0].reason
    assert slots.claim(b.id, key)
    assert not slots.claim(b.id, key)


def test_interrupted_beyond_grace_is_missed(slots):
    b = block()
    slots.seen_since(b.id, at(20, 12))
    key = slot_key(at(21, 7, 30))
    slots.claim(b.id, key)
    slots.mark_interrupted()
    result = owed(b, slots, at(21, 11, 0), BERLIN)
    assert not result.run and "interrupted" in result.missed[0].reason


@pytest.mark.parametrize("start, end, expected", [
    # spring forward 2026-03-29: 02:30 does not exist; runs once at 03:00
    (datetime(2026, 3, 28, 12, tzinfo=BERLIN), datetime(2026, 3, 29, 3, 0, 30, tzinfo=BERLIN), ["2026-03-29T01:00Z"]),
    # fall back 2026-10-25: 02:30 happens twice; runs once, at the first
    (datetime(2026, 10, 24, 12, tzinfo=BERLIN), datetime(2026, 10, 25, 2, 31, tzinfo=BERLIN), ["2026-10-25T00:30Z"]),
])
def test_dst_days_owe_exactly_one_run(slots, start, end, expected):
    b = block(cron="30 2 * * *", grace=timedelta(minutes=0))
    slots.seen_since(b.id, start)
    result = owed(b, slots, end, BERLIN)
    assert [s.key for s in result.run] == expected
    slots.claim(b.id, expected[0])
    slots.set(b.id, expected[0], "done")
    # The repeated hour comes round again an hour later: nothing more is owed.
    later = owed(b, slots, end + timedelta(hours=1, minutes=5), BERLIN)
    assert not later.run and not later.missed


def test_new_block_owes_nothing_from_before_it_existed(slots):
    b = block(cron="* * * * *", id="minutely")
    result = owed(b, slots, at(21, 9, 0, timezone.utc), BERLIN)
    assert not result.run and not result.missed
