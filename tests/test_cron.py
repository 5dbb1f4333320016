"""Cron in local wall-clock time: weekday numbering, ranges, and exactly once on DST days."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from routine.schedule.cron import Cron, CronError, slot_key

BERLIN = ZoneInfo("Europe/Berlin")


def fires(expr: str, start: datetime, days: int) -> list[datetime]:
    return Cron.parse(expr).between(start, start + timedelta(days=days), start.tzinfo)


def test_weekdays_count_from_sunday_as_in_every_crontab():
    # 2026-11-22 is a Sunday.
    start = datetime(2026, 11, 22, 0, 0, tzinfo=BERLIN)
    got = fires("30 7 * * 1-5", start, 7)
    assert [d.strftime("%a") for d in got] == ["Mon", "Tue", "Wed", "Thu", "Fri"]
    assert fires("30 7 * * mon-fri", start, 7) == got
    assert [d.strftime("%a") for d in fires("0 9 * * 0", start, 7)] == ["Sun"]
    assert [d.strftime("%a") for d in fires("0 9 * * 7", start, 7)] == ["Sun"]


def test_day_of_month_or_day_of_week_when_both_restricted():
    start = datetime(2026, 11, 1, 0, 0, tzinfo=BERLIN)
    got = fires("0 9 1 * mon", start, 30)
    assert [d.day for d in got] == [1, 2, 9, 16, 23, 30]


def test_spring_forward_runs_a_skipped_time_exactly_once_after_the_gap():
    start = datetime(2026, 3, 28, 12, 0, tzinfo=BERLIN)
    got = fires("30 2 * * *", start, 3)
    assert [d.strftime("%m-%d %H:%M") for d in got] == ["03-29 03:00", "03-30 02:30", "03-31 02:30"]
    # Four quarter-hours inside the gap collapse to one run, not four.
    got = fires("*/15 2 * * *", datetime(2026, 3, 29, 0, 0, tzinfo=BERLIN), 1)
    assert [d.strftime("%H:%M") for d in got] == ["03:00"]


def test_fall_back_runs_a_repeated_time_once():
    start = datetime(2026, 10, 24, 12, 0, tzinfo=BERLIN)
    got = fires("30 2 * * *", start, 2)
    assert len(got) == 2 and got[0].day == 25 and got[1].day == 26
    # The hourly block in the repeated hour: 02:00 once, not twice.
    day = fires("0 * * * *", datetime(2026, 10, 25, 0, 30, tzinfo=BERLIN), 0.5)
    assert [d.strftime("%H") for d in day].count("02") == 1
    assert len({slot_key(d) for d in day}) == len(day)


def test_slot_keys_are_utc_instants():
    fire = datetime(2026, 7, 1, 7, 30, tzinfo=BERLIN)
    assert slot_key(fire) == "2026-07-01T05:30Z"
    assert slot_key(fire.astimezone(timezone.utc)) == slot_key(fire)


@pytest.mark.parametrize("expr, words", [
    ("30 7 * *", "cron needs 5"),
    ("61 7 * * *", "out of range 0-59"),
    ("30 7 * * funday", "not a valid day of week"),
    ("*/0 * * * *", "positive"),
    ("30 9-7 * * *", "backwards"),
])
def test_bad_cron_says_what_is_wrong(expr, words):
    with pytest.raises(CronError) as info:
        Cron.parse(expr)
    assert words in str(info.value)


@pytest.mark.parametrize("expr", ["* * * * *", "*/7 1-4 * * *", "30 2 * * *", "0,15,45 */2 * * sun"])
@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/New_York"])
def test_next_after_matches_a_plain_scan_across_both_dst_days(expr, zone):
    """The binary search in next_after must agree with trying every time of day in order."""
    from datetime import timezone as dtz

    from routine.schedule.cron import wall_to_instant

    tz = ZoneInfo(zone)
    cron = Cron.parse(expr)

    def scan(after):
        day = after.astimezone(tz).date()
        for _ in range(10):
            if cron.matches_day(day):
                for t in cron.times_of_day():
                    fire = wall_to_instant(datetime.combine(day, t), tz)
                    if fire.astimezone(dtz.utc) > after.astimezone(dtz.utc):
                        return fire
            day += timedelta(days=1)

    for start in (datetime(2026, 3, 29, 0, 0, tzinfo=tz), datetime(2026, 10, 25, 0, 0, tzinfo=tz),
                  datetime(2026, 3, 8, 0, 0, tzinfo=tz), datetime(2026, 11, 1, 0, 0, tzinfo=tz)):
        after = start
        for _ in range(60):
            got, want = cron.next_after(after, tz), scan(after)
            assert got == want and got.utcoffset() == want.utcoffset(), (after, got, want)
            after = got + timedelta(seconds=1) if got.minute % 3 else got
