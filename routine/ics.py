"""The child process that expands one calendar (``python -m routine.ics LIMITS… NAME FIRST LAST ZONE MAX``),
under ``routine.bounded``'s limits: icalendar + recurring-ical-events turn a 350-byte rule
(`FREQ=SECONDLY`) into millions of occurrences, so they run here. The `.ics` bytes on stdin; out,
one JSON line: ``{"events": [...], "more": N}`` — the events touching the days FIRST..LAST
(local to ZONE), in order, at most MAX (``more``: how many past that were left out, counted up
to MAX again) — or ``{"error": why}``. ``routine.person.agenda`` starts it and reads the answer.
"""

from __future__ import annotations

import sys
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from routine.bounded import answer, limit_self
from routine.jsonvalue import JSONObject


def expand(data: bytes, name: str, first: date, last: date, zone: tzinfo, most: int) -> JSONObject:
    import icalendar
    import recurring_ical_events

    try:
        calendar = icalendar.Calendar.from_ical(data)
    except Exception as exc:  # the parser raises many kinds for a broken file
        return {"error": f"{name} is not a calendar file icalendar can read ({type(exc).__name__})"}
    start = datetime.combine(first, time(0), zone)
    end = datetime.combine(last + timedelta(days=1), time(0), zone)
    events: list[dict[str, Any]] = []
    more = 0
    for component in recurring_ical_events.of(calendar, components=["VEVENT"]).after(start):
        event = _event(component, zone)
        if event["start"] >= end:
            break
        if len(events) < most:
            events.append(event)
        else:
            more += 1
            if more >= most:  # enough to say "and more"; a rule by the second never ends
                break
    return {"events": [{**e, "start": e["start"].isoformat(), "end": e["end"].isoformat()} for e in events],
            "more": more}


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
