"""The person's calendars, read-only: `calendars:` in routine.yaml names `.ics` files or URLs on the
LAN; the input form `calendar: today` (or `tomorrow`, `this_week`) gives a step the events in
local time, recurring ones expanded (RRULE, EXDATE, moved occurrences, time zones) by
icalendar + recurring-ical-events.

A calendar that cannot be read is one sentence in what the step is given and one alert (shared
per calendar, resolved by itself when it reads again); the step still runs.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import ipaddress
import logging
import socket
import time
from dataclasses import dataclass
from datetime import date, datetime, timezone, tzinfo
from datetime import time as clock_time
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from routine.config.calendars import CalendarSource, Span
from routine.config.model import Config
from routine.host import peers, unitcheck
from routine.outside.bounded import ChildFailed, Limits, run_child
from routine.person.alerts import open_causes, raise_alert, resolve_alerts
from routine.redact import redact_text, redact_url

log = logging.getLogger(__name__)

MAX_BYTES = 5 * 2**20  # a calendar file or download larger than this is refused
CONNECT_SECONDS = 5.0  # to reach a calendar's server
FETCH_SECONDS = 10.0  # for the whole download, however slowly the server sends it
MAX_REDIRECTS = 3  # each to the same host or a LAN address only
MAX_EVENTS = 60  # listed in one report; the rest counted
_CAUSE = "calendar:"  # an unreadable calendar's alert cause (routine.causes), with its source (redacted)
MAX_OCCURRENCES = 500  # per calendar and span: a rule by the second is cut here, and said to be
EXPAND_LIMITS = Limits(cpu_seconds=5, wall_seconds=15, memory_bytes=1 << 30)  # one calendar's expansion
CACHE_SECONDS = 300.0  # an expansion (or why it failed) is kept this long for the same bytes and span
_EXPANDED: dict[tuple[str, str, date, date, str], tuple[float, Found | str]] = {}


@dataclass(frozen=True)
class Event:
    summary: str
    start: datetime  # local, aware; an all-day event starts at midnight
    end: datetime
    all_day: bool
    calendar: str
    location: str = ""


@dataclass
class Found:
    """A calendar's events in a span, and how many more were left out (``MAX_OCCURRENCES``)."""

    events: list[Event]
    more: int = 0
    refused: tuple[str, ...] = ()  # events left out whose rule is too dense to walk (``routine.outside.ics``)


class CalendarUnreadable(Exception):
    """One sentence: why a calendar could not be read (no URL's secret in it: ``routine.redact``)."""


def read_source(source: str, config_dir: Path) -> bytes:
    """An .ics file (relative to routine.yaml) or an http(s) URL, at most ``MAX_BYTES``."""
    if source.startswith(("http://", "https://")):
        data = fetch(source)
    else:
        path = (config_dir / Path(source).expanduser()).resolve()
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_BYTES + 1)
        except OSError as exc:
            raise CalendarUnreadable(f"{path} cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_BYTES:
        raise CalendarUnreadable(f"{redact_url(source)} is larger than {MAX_BYTES // 2**20} MiB")
    return data


def fetch(url: str) -> bytes:
    """The body at ``url`` (at most ``MAX_BYTES`` + 1), within ``FETCH_SECONDS`` in all (connect in
    ``CONNECT_SECONDS``); redirects followed only to the same host or a LAN address."""
    deadline = time.monotonic() + FETCH_SECONDS
    first_host = urlsplit(url).hostname
    for _ in range(MAX_REDIRECTS + 1):
        try:
            status, location, body = _get(url, deadline)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            late = time.monotonic() >= deadline
            host = peers.url_host(url)
            why = unitcheck.refusal([host] if host else []) or (
                f"no whole answer within {FETCH_SECONDS:g} s" if late else redact_text(str(exc) or type(exc).__name__))
            raise CalendarUnreadable(f"{redact_url(url)} did not answer ({why})") from None
        if location is None:
            if status >= 400:
                raise CalendarUnreadable(f"{redact_url(url)} did not answer (HTTP {status})")
            return body
        target = urljoin(url, location)
        if urlsplit(target).hostname != first_host and not _on_lan(urlsplit(target).hostname):
            raise CalendarUnreadable(f"{redact_url(url)} redirects to {redact_url(target)}, off the LAN: not followed")
        url = target
    raise CalendarUnreadable(f"{redact_url(url)} redirects more than {MAX_REDIRECTS} times")


def _get(url: str, deadline: float) -> tuple[int, str | None, bytes]:
    """(status, a redirect's Location, body) of one GET, each read bounded by ``deadline``."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("not an http(s) URL")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = kind(parts.hostname, parts.port, timeout=CONNECT_SECONDS)
    try:
        headers = {"User-Agent": "routine", "Accept": "text/calendar"}
        if parts.username is not None:
            token = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(token).decode()
        conn.request("GET", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), headers=headers)
        _until(conn, deadline)
        reply = conn.getresponse()
        if reply.status in (301, 302, 303, 307, 308) and reply.getheader("Location"):
            return reply.status, reply.getheader("Location"), b""
        body = bytearray()
        while len(body) <= MAX_BYTES:
            _until(conn, deadline)
            chunk = reply.read1(65536)
            if not chunk:
                break
            body += chunk
        return reply.status, None, bytes(body)
    finally:
        conn.close()


def _until(conn: http.client.HTTPConnection, deadline: float) -> None:
    """The next read waits at most until ``deadline`` (a server trickling bytes gets no longer)."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("past the deadline")
    if conn.sock is not None:
        conn.sock.settimeout(min(left, CONNECT_SECONDS))


def _on_lan(host: str | None) -> bool:
    """``host`` resolves only to private, loopback or link-local addresses."""
    if not host:
        return False
    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(addresses) and all(_private(a) for a in addresses)


def _private(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    return ip.is_private or ip.is_loopback or ip.is_link_local


def events_between(data: bytes, name: str, first: date, last: date, zone: tzinfo) -> Found:
    """The events of one calendar that touch the days ``first``..``last`` (local), in order: at
    most ``MAX_OCCURRENCES``, expanded in a bounded child process (``routine.outside.ics``)."""
    offset = zone.utcoffset(datetime.combine(first, clock_time(12)))
    zone_arg = getattr(zone, "key", None) or f"{int(offset.total_seconds()) if offset else 0:+d}"
    key = (hashlib.sha256(data).hexdigest(), name, first, last, zone_arg)
    cached = _EXPANDED.get(key)
    if cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
        if isinstance(cached[1], str):
            raise CalendarUnreadable(cached[1])
        return cached[1]
    try:
        found = run_child("routine.outside.ics",
                          [name, first.isoformat(), last.isoformat(), zone_arg, str(MAX_OCCURRENCES)],
                          data, EXPAND_LIMITS)
    except ChildFailed as exc:
        why = str(exc)  # the child's own sentence names the calendar; a limit's does not
        why = why if why.startswith(name) else f"{name} could not be expanded ({why})"
        _remember(key, why)
        raise CalendarUnreadable(why) from None
    events = [Event(str(e["summary"]), datetime.fromisoformat(e["start"]).astimezone(zone),
                    datetime.fromisoformat(e["end"]).astimezone(zone), bool(e["all_day"]), name, str(e["location"]))
              for e in found.get("events") or []]
    result = Found(events, int(found.get("more") or 0), tuple(str(r) for r in found.get("refused") or []))
    _remember(key, result)
    return result


def _remember(key: tuple[str, str, date, date, str], outcome: Found | str) -> None:
    """One expansion per calendar, span and content for ``CACHE_SECONDS``: the steps of one run ask
    the same, and a calendar that costs the child its whole cap costs it once."""
    if len(_EXPANDED) >= 64:
        _EXPANDED.clear()
    _EXPANDED[key] = (time.monotonic(), outcome)


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
            found = events_between(read_source(cal.source, config.path.parent), cal.name, first, last, zone)
        except CalendarUnreadable as exc:
            log.warning("calendar %s could not be read: %s", cal.name, exc)
            problems.append(f"(The calendar {cal.name} could not be read: {exc}; its events are missing.)")
            if alert:
                _raise(config, cal, str(exc), now)
            continue
        events += found.events
        problems += [f"(The calendar {cal.name}: {why}.)" for why in found.refused]
        if found.more:
            problems.append(f"(The calendar {cal.name} has more than {MAX_OCCURRENCES} events in this span: "
                            f"{found.more}{'+' if found.more >= MAX_OCCURRENCES else ''} more were left out.)")
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
    named = {_cause(cal) for cal in config.calendars}
    for cause in open_causes(config):
        if cause.startswith(_CAUSE) and cause not in named:
            resolve_alerts(config, now, cause, "that calendar is no longer in `calendars:`.")


def _cause(cal: CalendarSource) -> str:
    """The alert cause of ``cal``: its source without a URL's secrets (alert notes are indexed)."""
    return f"{_CAUSE}{redact_url(cal.source)}"


def fix_for(config: Config, cal: CalendarSource) -> str:
    return f"check `calendars:` in {config.path} (the file or URL {redact_url(cal.source)})."


def _raise(config: Config, cal: CalendarSource, problem: str, now: datetime) -> None:
    raise_alert(config, now, f"calendar {cal.name} unreadable", f"The calendar {cal.name} could not be read: "
                f"{problem}.", fix_for(config, cal), cause=_cause(cal))


def _resolve(config: Config, cal: CalendarSource, now: datetime) -> None:
    resolve_alerts(config, now, _cause(cal), "the calendar can be read again.")


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
