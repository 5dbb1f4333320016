"""The person's calendars, read-only: `calendars:` in routine.yaml names `.ics` files or URLs on the
LAN; the input form `calendar: today` (or `tomorrow`, `this_week`) gives a step the events in
local time, recurring ones expanded (RRULE, EXDATE, moved occurrences, time zones) by
icalendar + recurring-ical-events.

A calendar that cannot be read is one sentence in what the step is given and one alert (shared
per calendar, resolved by itself when it reads again); the step still runs.
"""

from __future__ import annotations

import logging
import urllib.request
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any

from routine import peers, unitcheck
from routine.config.calendars import CalendarSource, Span
from routine.config.model import Config

log = logging.getLogger(__name__)

MAX_BYTES = 5 * 2**20  # a calendar file or download larger than this is refused
FETCH_SECONDS = 10.0
MAX_EVENTS = 60  # listed in one report; the rest counted
_CAUSE = "calendar:"  # an unreadable calendar's alert cause (routine.causes), with its source


@dataclass(frozen=True)
class Event:
    summary: str
    start: datetime  # local, aware; an all-day event starts at midnight
    end: datetime
    all_day: bool
    calendar: str
    location: str = ""


class CalendarUnreadable(Exception):
    """One sentence: why a calendar could not be read."""


def read_source(source: str, config_dir: Path) -> bytes:
    """An .ics file (relative to routine.yaml) or an http(s) URL, at most ``MAX_BYTES``."""
    if source.startswith(("http://", "https://")):
        try:
            with urllib.request.urlopen(source, timeout=FETCH_SECONDS) as reply:  # noqa: S310 - the person's own URL
                data = reply.read(MAX_BYTES + 1)
        except OSError as exc:
            host = peers.url_host(source)
            why = unitcheck.refusal([host] if host else []) or str(getattr(exc, "reason", exc))
            raise CalendarUnreadable(f"{source} did not answer ({why})") from None
    else:
        path = (config_dir / Path(source).expanduser()).resolve()
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_BYTES + 1)
        except OSError as exc:
            raise CalendarUnreadable(f"{path} cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_BYTES:
        raise CalendarUnreadable(f"{source} is larger than {MAX_BYTES // 2**20} MiB")
    return data


def events_between(data: bytes, name: str, first: date, last: date, zone: tzinfo) -> list[Event]:
    """The events of one calendar that touch the days ``first``..``last`` (local), in order."""
    import icalendar
    import recurring_ical_events

    try:
        calendar = icalendar.Calendar.from_ical(data)
        found = recurring_ical_events.of(calendar).between(first, last + timedelta(days=1))
    except Exception as exc:  # the parsers raise many kinds for a broken file
        raise CalendarUnreadable(f"{name} is not a calendar file icalendar can read ({type(exc).__name__})") from None
    events = [_event(component, name, zone) for component in found if component.name == "VEVENT"]
    return sorted(events, key=lambda e: (e.start, e.summary))


def _event(component: Any, name: str, zone: tzinfo) -> Event:
    start = component.get("DTSTART").dt
    end_prop = component.get("DTEND")
    end = end_prop.dt if end_prop is not None else start
    all_day = not isinstance(start, datetime)
    return Event(summary=str(component.get("SUMMARY", "(no title)")), start=_local(start, zone),
                 end=_local(end, zone), all_day=all_day, calendar=name, location=str(component.get("LOCATION", "")))


def _local(moment: date | datetime, zone: tzinfo) -> datetime:
    if not isinstance(moment, datetime):
        return datetime.combine(moment, time(0), zone)
    return moment.astimezone(zone) if moment.tzinfo else moment.replace(tzinfo=zone)  # floating time: local


def report(config: Config, span: Span, now: datetime, alert: bool = True) -> str:
    """What a step is given for `calendar: SPAN`: each event in local time, grouped by day.

    ``alert``: a calendar that cannot be read raises its alert, one that reads again resolves it;
    a dry run passes False (it writes and sends nothing: the problem is in the text and logged)."""
    if not config.calendars:
        return ""
    zone = now.tzinfo
    if zone is None:
        raise ValueError("the calendar's day needs an aware time")
    first, last = span.days(now.date())
    events: list[Event] = []
    problems = []
    for cal in config.calendars:
        try:
            events += events_between(read_source(cal.source, config.path.parent), cal.name, first, last, zone)
        except CalendarUnreadable as exc:
            log.warning("calendar %s could not be read: %s", cal.name, exc)
            problems.append(f"(The calendar {cal.name} could not be read: {exc}; its events are missing.)")
            if alert:
                _raise(config, cal, str(exc), now)
            continue
        if alert:
            _resolve(config, cal, now)
    if alert:
        resolve_removed(config, now)
    return _format(sorted(events, key=lambda e: (e.start, e.summary)), span, first, last, now) + "".join(
        "\n" + p for p in problems)


def check(config: Config, now: datetime) -> list[tuple[CalendarSource, str | None]]:
    """Each calendar read and parsed now (`routine doctor`): None, or why it cannot be; the alert
    of one that reads again is resolved here too, not left open until a step next reads it."""
    results: list[tuple[CalendarSource, str | None]] = []
    zone = now.tzinfo or timezone.utc
    for cal in config.calendars:
        try:
            events_between(read_source(cal.source, config.path.parent), cal.name, now.date(), now.date(), zone)
        except CalendarUnreadable as exc:
            results.append((cal, str(exc)))
            continue
        _resolve(config, cal, now)
        results.append((cal, None))
    resolve_removed(config, now)
    return results


def resolve_removed(config: Config, now: datetime) -> None:
    """An open calendar alert whose calendar is no longer in `calendars:` (the mistyped path was
    corrected, the calendar taken out) has lost its cause: resolved."""
    from routine.alerts import open_causes, resolve_alerts

    named = {f"{_CAUSE}{cal.source}" for cal in config.calendars}
    for cause in open_causes(config):
        if cause.startswith(_CAUSE) and cause not in named:
            resolve_alerts(config, now, cause, "that calendar is no longer in `calendars:`.")


def fix_for(config: Config, cal: CalendarSource) -> str:
    return f"check `calendars:` in {config.path} (the file or URL {cal.source})."


def _raise(config: Config, cal: CalendarSource, problem: str, now: datetime) -> None:
    from routine.alerts import raise_alert

    raise_alert(config, now, f"calendar {cal.name} unreadable", f"The calendar {cal.name} could not be read: "
                f"{problem}.", fix_for(config, cal), cause=f"{_CAUSE}{cal.source}")


def _resolve(config: Config, cal: CalendarSource, now: datetime) -> None:
    from routine.alerts import resolve_alerts

    resolve_alerts(config, now, f"{_CAUSE}{cal.source}", "the calendar can be read again.")


def _format(events: list[Event], span: Span, first: date, last: date, now: datetime) -> str:
    zone = now.tzname() or "local time"
    head = f"Calendar, {span.value.replace('_', ' ')} ({first:%a %d %b}" + (
        f" to {last:%a %d %b}" if last != first else "") + f", times in {zone}):"
    if not events:
        return head + "\nNo events."
    lines = [head]
    day = None
    for event in events[:MAX_EVENTS]:
        if first != last and event.start.date() != day:
            day = event.start.date()
            lines.append(f"{day:%A %d %b}:")
        when = "all day" if event.all_day else f"{event.start:%H:%M}–{event.end:%H:%M}"
        where = f" @ {event.location}" if event.location else ""
        lines.append(f"- {when} {event.summary}{where} ({event.calendar})")
    if len(events) > MAX_EVENTS:
        lines.append(f"- … and {len(events) - MAX_EVENTS} more")
    return "\n".join(lines)
