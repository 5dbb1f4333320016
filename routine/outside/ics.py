"""The child process that expands one calendar (``python -m routine.outside.ics LIMITS… NAME FIRST LAST ZONE MAX``),
under ``routine.outside.bounded``'s limits: icalendar + recurring-ical-events turn a 350-byte rule
(`FREQ=SECONDLY`) into millions of occurrences, so they run here. The `.ics` bytes on stdin; out,
one JSON line: ``{"events": [...], "more": N, "refused": [...]}`` — the events touching the days
FIRST..LAST (local to ZONE), in order, at most MAX (``more``: how many past that were left out,
counted up to MAX again; ``refused``: a sentence for each event left out because its rule would
walk more than ``WALK_LIMIT`` times to reach the span) — or ``{"error": why}``.
``routine.person.agenda`` starts it and reads the answer.
"""

from __future__ import annotations

import sys
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from routine.jsonvalue import JSONObject
from routine.outside.bounded import answer, limit_self

WALK_LIMIT = 20_000  # times of one rule walked from its start to the span's end (dateutil walks every one)
WINDOW = timedelta(hours=1)  # the first stretch of the span looked at; each next one twice as long
_PER_DAY = {"SECONDLY": 86400.0, "MINUTELY": 1440.0, "HOURLY": 24.0, "DAILY": 1.0, "WEEKLY": 1 / 7,
            "MONTHLY": 1 / 28, "YEARLY": 1 / 365}
_BY = ("BYSECOND", "BYMINUTE", "BYHOUR", "BYDAY", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYMONTH")


def expand(data: bytes, name: str, first: date, last: date, zone: tzinfo, most: int) -> JSONObject:
    import icalendar
    import recurring_ical_events

    try:
        calendar = icalendar.Calendar.from_ical(data)
    except Exception as exc:  # the parser raises many kinds for a broken file
        return {"error": f"{name} is not a calendar file icalendar can read ({type(exc).__name__})"}
    start = datetime.combine(first, time(0), zone)
    end = datetime.combine(last + timedelta(days=1), time(0), zone)
    refused = _drop_dense(calendar, end, zone)
    query = recurring_ical_events.of(calendar, components=["VEVENT"])
    events: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    low, width = start, WINDOW
    # The span in growing stretches, stopping once enough are found: a rule by the minute fills an hour
    # with 60 times, and `after` would build every one of the day's before the first is given.
    while low < end and len(events) < 2 * most:
        high = min(low + width, end)
        for component in query.between(low, high):
            event = _event(component, zone)
            key = (str(component.get("UID", "")), event["start"].isoformat(), event["summary"])
            if key not in seen and event["start"] < end:
                seen.add(key)
                events.append(event)
        low, width = high, width * 2
    events.sort(key=lambda e: (e["start"], e["summary"]))
    more = min(max(len(events) - most, 0), most)
    return {"events": [{**e, "start": e["start"].isoformat(), "end": e["end"].isoformat()} for e in events[:most]],
            "more": more, "refused": refused}


def _drop_dense(calendar: Any, end: datetime, zone: tzinfo) -> list[str]:
    """Take out each event whose rule would walk more than ``WALK_LIMIT`` times to reach ``end``
    (every second since this morning, every hour for ten years): a sentence each."""
    said = []
    for component in list(calendar.subcomponents):
        if component.name != "VEVENT" or component.get("RRULE") is None:
            continue
        try:
            walked, per_day, since = _walked(component, end, zone)
        except (ValueError, TypeError, AttributeError, OverflowError, ZeroDivisionError):
            continue  # recurring-ical-events says what is wrong with it
        if walked > WALK_LIMIT:
            calendar.subcomponents.remove(component)
            title = str(component.get("SUMMARY", "(no title)"))[:80]
            said.append(f"the event {title!r} repeats about {per_day:,.0f} times a day since {since:%Y-%m-%d}: "
                        f"more than {WALK_LIMIT:,} times to walk to this span, so it is left out")
    return said


def _walked(component: Any, end: datetime, zone: tzinfo) -> tuple[float, float, date]:
    """(about how many times the event's rules give from its start to ``end``, per day, its start)."""
    begin = _local(component.get("DTSTART").dt, zone)
    rules = component.get("RRULE")
    total, most_per_day = 0.0, 0.0
    for rule in rules if isinstance(rules, list) else [rules]:
        per_day = _PER_DAY.get(str((rule.get("FREQ") or [""])[0]).upper(), 0.0) / max(int((rule.get("INTERVAL")
                                                                                            or [1])[0]), 1)
        for key in _BY:
            per_day *= max(len(rule.get(key) or []), 1)
        per_day = min(per_day, 86400.0)
        stop = end
        until = rule.get("UNTIL")
        if until:
            stop = min(stop, _local(until[0], zone))
        walked = per_day * max((stop - begin).total_seconds() / 86400 + 1, 0)
        count = rule.get("COUNT")
        if count:
            walked = min(walked, float(int(count[0])))
        total, most_per_day = total + walked, max(most_per_day, per_day)
    return total, most_per_day, begin.date()


def _event(component: Any, zone: tzinfo) -> dict[str, Any]:
    start = component.get("DTSTART").dt
    end_prop = component.get("DTEND")
    end = end_prop.dt if end_prop is not None else start
    return {"summary": str(component.get("SUMMARY", "(no title)")), "start": _local(start, zone),
            "end": _local(end, zone), "all_day": not isinstance(start, datetime),
            "location": str(component.get("LOCATION", ""))}


def _local(moment: date | datetime, zone: tzinfo) -> datetime:
    if not isinstance(moment, datetime):
        return datetime.combine(moment, time(0), zone)
    return moment.astimezone(zone) if moment.tzinfo else moment.replace(tzinfo=zone)  # floating time: local


def main(argv: list[str]) -> int:
    name, first, last, zone, most = limit_self(argv)
    data = sys.stdin.buffer.read()
    return answer(lambda: expand(data, name, date.fromisoformat(first), date.fromisoformat(last), ZoneInfo(zone),
                                 int(most)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
