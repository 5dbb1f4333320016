"""The daemon's clock: the system clock, or a test's driven clock (ROUTINE_TEST_CLOCK), which the
timers follow (a slot of the daemon's clock fires at the system instant that clock reaches it)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from routine.daemon.clock import CLOCK_ENV, DrivenClock, driven_clock
from routine.daemon.timers import CronSlotTrigger


def test_without_the_variable_the_daemon_reads_the_system_clock(monkeypatch):
    monkeypatch.delenv(CLOCK_ENV, raising=False)
    assert driven_clock() is None


def test_the_driven_clock_is_the_system_clock_plus_the_seconds_in_its_file(tmp_path, monkeypatch):
    path = tmp_path / "clock"
    monkeypatch.setenv(CLOCK_ENV, str(path))
    clock = driven_clock()
    assert clock is not None and clock.offset() == timedelta(0)  # no file yet: the system clock
    path.write_text("90\n")
    assert clock.refresh() and not clock.refresh()  # moved once; unchanged after
    assert abs((clock.now() - datetime.now(timezone.utc)) - timedelta(seconds=90)) < timedelta(seconds=1)
    path.write_text("not a number")
    assert not clock.refresh() and clock.offset() == timedelta(seconds=90)  # half-written: the last offset stays
    assert DrivenClock(path).offset() == timedelta(0)


def test_a_slot_of_the_driven_clock_fires_when_that_clock_reaches_it():
    system_now = datetime(2026, 11, 24, 13, 0, 10, tzinfo=timezone.utc)
    plain = CronSlotTrigger("* * * * *", "UTC")
    assert plain.get_next_fire_time(None, system_now) == datetime(2026, 11, 24, 13, 1, tzinfo=timezone.utc)
    ahead = CronSlotTrigger("* * * * *", "UTC", offset=lambda: timedelta(seconds=48))  # its clock says 13:00:58
    assert ahead.get_next_fire_time(None, system_now) == datetime(2026, 11, 24, 13, 0, 12, tzinfo=timezone.utc)
    daily = CronSlotTrigger("0 3 * * *", "UTC", offset=lambda: timedelta(days=1))
    # its clock says 25 Nov 13:00: the next slot is 26 Nov 03:00 there, a day earlier here
    assert daily.get_next_fire_time(None, system_now) == datetime(2026, 11, 25, 3, 0, tzinfo=timezone.utc)
