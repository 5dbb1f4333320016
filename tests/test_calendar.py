"""Calendars in context: `calendars:` names .ics files (or LAN URLs); `calendar: today` gives the
07:30 Plan the day's events in local time, recurring ones expanded across a DST change, with
their exceptions. A broken calendar is one sentence and the block still runs. Real icalendar,
recurring-ical-events, the stand-in Ollama and the shipped schedule."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from calendar_server import refuse, serving

BERLIN = ZoneInfo("Europe/Berlin")


def _other_dst_start(today: date) -> date:
    """The same weekday some weeks back, on the other side of a DST change from ``today``."""
    offset = datetime.combine(today, datetime.min.time(), BERLIN).utcoffset()
    day = today - timedelta(weeks=1)
    while datetime.combine(day, datetime.min.time(), BERLIN).utcoffset() == offset:
        day -= timedelta(weeks=1)
    return day


def ics(today: date) -> str:
    start = _other_dst_start(today)
    yesterday = today - timedelta(days=1)

    def stamp(d: date, hhmm: str) -> str:
        return f"{d:%Y%m%d}T{hhmm}00"

    return "\r\n".join([
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//routine//EN",
        # Weekly at 09:00 Berlin time since a date in the other DST state: still 09:00 local today.
        "BEGIN:VEVENT", "UID:supplier@test", f"DTSTART;TZID=Europe/Berlin:{stamp(start, '0900')}",
        f"DTEND;TZID=Europe/Berlin:{stamp(start, '0930')}", "RRULE:FREQ=WEEKLY", "SUMMARY:Supplier call",
        "LOCATION:Room 2", "END:VEVENT",
        # A daily standup at 08:45; yesterday cancelled (EXDATE), today's moved to 10:15.
        "BEGIN:VEVENT", "UID:standup@test", f"DTSTART;TZID=Europe/Berlin:{stamp(start, '0845')}",
        f"DTEND;TZID=Europe/Berlin:{stamp(start, '0900')}", "RRULE:FREQ=DAILY",
        f"EXDATE;TZID=Europe/Berlin:{stamp(yesterday, '0845')}", "SUMMARY:Standup", "END:VEVENT",
        "BEGIN:VEVENT", "UID:standup@test", f"RECURRENCE-ID;TZID=Europe/Berlin:{stamp(today, '0845')}",
        f"DTSTART;TZID=Europe/Berlin:{stamp(today, '1015')}", f"DTEND;TZID=Europe/Berlin:{stamp(today, '1030')}",
        "SUMMARY:Standup", "END:VEVENT",
        # In UTC: shown in local time.
        "BEGIN:VEVENT", "UID:dentist@test", f"DTSTART:{stamp(today, '1300')}Z", f"DTEND:{stamp(today, '1400')}Z",
        "SUMMARY:Dentist", "END:VEVENT",
        "BEGIN:VEVENT", "UID:birthday@test", f"DTSTART;VALUE=DATE:{today:%Y%m%d}",
        f"DTEND;VALUE=DATE:{today + timedelta(days=1):%Y%m%d}", "SUMMARY:Anna's birthday", "END:VEVENT",
        "END:VCALENDAR", ""])


def plan_request(ollama) -> str:
    """What the stand-in was asked for the 07:30 Plan (the planner's step), as one text."""
    for body in ollama.requests:
        text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
        if "time-blocked plan for today" in text:
            return text
    raise AssertionError("the planner's request never reached the model")


@pytest.fixture
def calendar_home(initialised):
    home = initialised
    today = datetime.now(BERLIN).date()
    (home.config.parent / "work.ics").write_text(ics(today))
    home.config.write_text(home.config.read_text() + "\ntimezone: Europe/Berlin\ncalendars: [work.ics]\n")
    return home


def test_the_morning_plan_sees_todays_meetings_at_their_local_times_across_dst(calendar_home, ollama):
    home = calendar_home
    home.run("fire", "morning-alignment", check=True)
    asked = plan_request(ollama)
    assert "Calendar, today" in asked
    assert "09:00–09:30 Supplier call @ Room 2 (work)" in asked  # DTSTART was in the other DST state
    assert "10:15–10:30 Standup (work)" in asked and "08:45–09:00 Standup" not in asked  # moved today
    dentist = datetime.combine(datetime.now(BERLIN).date(), datetime.min.time().replace(hour=13),
                               ZoneInfo("UTC")).astimezone(BERLIN)
    assert f"{dentist:%H:%M}–" in asked and "Dentist" in asked
    assert "all day Anna's birthday (work)" in asked


def test_the_1630_setup_plans_around_tomorrows_meetings_at_their_local_times(initialised):
    """The shipped 16:30 block (next-day-setup) reads `calendar: tomorrow`: its planner step is
    given tomorrow's events, at their local times, and none of today's (a dry run: no model)."""
    import yaml

    home = initialised
    daily = yaml.safe_load((home.config.parent / "schedules" / "daily.yaml").read_text())["blocks"]["next-day-setup"]
    assert daily["cron"].startswith("30 16 ")
    assert [s["agent"] for s in daily["steps"] if "calendar: tomorrow" in s.get("inputs", [])] == ["planner"]
    today = datetime.now(BERLIN).date()
    tomorrow = today + timedelta(days=1)
    retro = "\r\n".join(["BEGIN:VEVENT", "UID:retro@test", f"DTSTART;TZID=Europe/Berlin:{today:%Y%m%d}T150000",
                          f"DTEND;TZID=Europe/Berlin:{today:%Y%m%d}T160000", "SUMMARY:Retro today", "END:VEVENT"])
    (home.config.parent / "work.ics").write_text(ics(tomorrow).replace("END:VCALENDAR", retro + "\r\nEND:VCALENDAR"))
    home.config.write_text(home.config.read_text() + "\ntimezone: Europe/Berlin\ncalendars: [work.ics]\n")
    shown = home.run("fire", "next-day-setup", "--dry-run", check=True).stdout
    [asked] = [part for part in shown.split("# Dry run:") if "Draft tomorrow's time-blocked plan" in part]
    assert f"Calendar, tomorrow ({tomorrow:%a %d %b}, times in " in asked
    assert "09:00–09:30 Supplier call @ Room 2 (work)" in asked  # DTSTART was in the other DST state
    assert "10:15–10:30 Standup (work)" in asked and "08:45–09:00 Standup" not in asked  # moved tomorrow
    dentist = datetime.combine(tomorrow, datetime.min.time().replace(hour=13), ZoneInfo("UTC")).astimezone(BERLIN)
    assert f"{dentist:%H:%M}–{dentist + timedelta(hours=1):%H:%M} Dentist (work)" in asked
    assert "all day Anna's birthday (work)" in asked
    assert "Retro today" not in asked  # today's events are the 07:30 block's


def test_a_cancelled_occurrence_is_not_shown_and_this_week_groups_by_day(tmp_path):
    from routine.config.calendars import Span
    from routine.person.agenda import _format, events_between

    today = date(2026, 11, 24)  # a Tuesday, in winter time; the series began in summer time
    events = events_between(ics(today).encode(), "work", today - timedelta(days=1), today, BERLIN).events
    names = [(e.start.strftime("%a %H:%M"), e.summary) for e in events]
    assert ("Mon 08:45", "Standup") not in names  # EXDATE
    assert ("Mon 09:00", "Supplier call") not in names and ("Tue 09:00", "Supplier call") in names
    week = events_between(ics(today).encode(), "work", today, today + timedelta(days=5), BERLIN).events
    text = _format(week, Span.THIS_WEEK, today, today + timedelta(days=5), datetime(2026, 11, 24, 7, 30, tzinfo=BERLIN))
    assert "Wednesday 25 Nov:\n- 08:45–09:00 Standup (work)" in text


def test_a_broken_or_unreachable_calendar_is_one_sentence_and_the_block_still_runs(initialised, ollama):
    home = initialised
    (home.config.parent / "broken.ics").write_text("BEGIN:VCALENDAR\nthis is not ical\n")

    with serving(refuse) as base:
        home.config.write_text(
            home.config.read_text() + f"\ncalendars: [broken.ics, {{source: '{base}/family.ics', name: family}}]\n"
        )
        done = home.run("fire", "morning-alignment")
    assert done.returncode == 0, done.stderr
    asked = plan_request(ollama)
    assert "The calendar broken could not be read: broken is not a calendar file icalendar can read" in asked
    assert "The calendar family could not be read:" in asked and "did not answer" in asked
    alerts = sorted(p.name for p in (home.vault / "Alerts").glob("*calendar*"))
    assert len(alerts) == 2, alerts  # one per calendar, however many steps read it
    assert "Traceback" not in done.stderr


def test_a_calendar_span_that_is_no_span_is_one_sentence(initialised, ollama):
    home = initialised
    agent = home.vault / "Agents" / "Planner.md"
    agent.write_text(agent.read_text().replace('inputs: [', 'inputs: ["calendar: someday", ', 1))
    done = home.run("fire", "planner")
    assert done.returncode != 0 and "`calendar: someday`" in done.stderr and "today, tomorrow, this_week" in done.stderr
    daily = home.config.parent / "schedules" / "daily.yaml"
    daily.write_text(daily.read_text().replace('"calendar: today"', '"calendar: soon"'))
    listed = home.run("schedule", "validate")
    assert (
        listed.returncode == 2
        and "steps[1].inputs[1]': `calendar: soon` is not a span of days; write one of: today, tomorrow, this_week."
        in listed.stdout + listed.stderr
    )


def test_an_agent_with_a_calendar_input_has_the_calendar_in_a_conversation_too(calendar_home, ollama):
    """Chat gathers every input form a run gathers (the runner's services): the planner asked in
    chat sees today's events as its 07:30 Plan would, not a prompt silently without them."""
    home = calendar_home
    agent = home.vault / "Agents" / "Planner.md"
    agent.write_text(agent.read_text().replace('inputs: [', 'inputs: ["calendar: today", ', 1))
    done = home.run("ask", "planner", "What is on my calendar today?")
    assert done.returncode == 0, done.stderr
    asked = next(
        "\n".join(str(m.get("content") or "") for m in body["messages"])
        for body in reversed(list(ollama.requests))
        if body["_path"] == "/api/chat" and "What is on my calendar today?" in str(body["messages"]))
    assert "the person's calendar, today" in asked
    assert "Supplier call" in asked and "Dentist" in asked and "Anna's birthday" in asked


def _trickle(handler) -> None:
    """A server that answers, then sends its calendar one byte every 3 seconds."""
    import time as clock

    handler.send_response(200)
    handler.send_header("Content-Type", "text/calendar")
    handler.end_headers()
    for byte in b"BEGIN:VCALENDAR\r\n":
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        clock.sleep(3)


def _huge(handler) -> None:
    handler.send_response(200)
    handler.end_headers()
    chunk = b"X" * 65536
    for _ in range(200):  # 12.5 MiB
        handler.wfile.write(chunk)


def _off_lan(handler) -> None:
    handler.send_response(302)
    handler.send_header("Location", "http://93.184.215.14/steal.ics")
    handler.end_headers()


def test_a_trickling_huge_or_redirecting_calendar_is_one_sentence_and_the_block_runs_on_time(initialised, ollama):
    import time

    from routine.person.agenda import FETCH_SECONDS

    home = initialised
    with serving(_trickle) as slow, serving(_huge) as huge, serving(_off_lan) as away:
        home.config.write_text(home.config.read_text() + f"\ncalendars: [{{source: '{slow}/a.ics', name: slow}}, "
                               f"{{source: '{huge}/b.ics', name: huge}}, {{source: '{away}/c.ics', name: away}}]\n")
        started = time.monotonic()
        done = home.run("fire", "morning-alignment")
        took = time.monotonic() - started
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    steps_reading = 1  # the planner's step reads `calendar: today`; each calendar at most FETCH_SECONDS
    assert took < 3 * steps_reading * FETCH_SECONDS + 60, took
    asked = plan_request(ollama)
    assert f"The calendar slow could not be read: http://127.0.0.1:{slow.rsplit(':', 1)[1]} did not answer " \
           f"(no whole answer within {FETCH_SECONDS:g} s)" in asked
    assert "The calendar huge could not be read:" in asked and "is larger than 5 MiB" in asked
    assert "redirects to http://93.184.215.14, off the LAN: not followed" in asked
    alerts = sorted(p.name for p in (home.vault / "Alerts").glob("*calendar*"))
    assert len(alerts) == 3, alerts


def _vevent(uid: str, start: str, summary: str, rule: str | None = None) -> list[str]:
    return ["BEGIN:VEVENT", f"UID:{uid}", f"DTSTART;TZID=Europe/Berlin:{start}", f"DTEND;TZID=Europe/Berlin:{start}",
            *([f"RRULE:{rule}"] if rule else []), f"SUMMARY:{summary}", "END:VEVENT"]


def _calendar(*events: list[str]) -> str:
    return "\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//routine//EN",
                         *(line for event in events for line in event), "END:VCALENDAR", ""])


def test_a_rule_by_the_second_is_left_out_in_a_sentence_and_costs_a_dry_run_at_most_twice_a_plain_one(
        initialised, ollama):
    """Issue 46: 350 bytes of `RRULE:FREQ=SECONDLY` from this morning made a two-step dry run take 21 s
    (each step spent the expansion child's whole cap walking every second since DTSTART). Now a rule
    that would walk more than WALK_LIMIT times to reach the span is left out with one sentence, a
    dense one within it is cut at the cap, and a calendar is expanded once per read."""
    import time

    from routine.person import agenda
    from routine.person.agenda import MAX_OCCURRENCES

    home = initialised
    today = datetime.now(BERLIN).date()
    tomorrow = today + timedelta(days=1)
    dentist = _vevent("dentist@test", f"{tomorrow:%Y%m%d}T100000", "Dentist")
    home.config.write_text(home.config.read_text() + "\ntimezone: Europe/Berlin\ncalendars: [flood.ics]\n")

    def dry_run(calendar: str) -> tuple[float, str]:
        (home.config.parent / "flood.ics").write_text(calendar)
        agenda._EXPANDED.clear()  # each run measured from the start (one run's two steps share one expansion)
        started = time.monotonic()
        shown = home.run("fire", "next-day-setup", "--dry-run", check=True).stdout
        return time.monotonic() - started, shown

    plain, shown = min(dry_run(_calendar(dentist)) for _ in range(2))
    assert "10:00 Dentist" in shown
    flood, shown = min(dry_run(_calendar(dentist, _vevent("flood@test", f"{today:%Y%m%d}T000000", "Tick",
                                                          "FREQ=SECONDLY"))) for _ in range(2))
    assert "the event 'Tick' repeats about 86,400 times a day since" in shown and "so it is left out" in shown
    assert "10:00 Dentist" in shown and "Tick (flood)" not in shown
    print(f"dry run of next-day-setup: {plain:.2f} s with a plain calendar, {flood:.2f} s with the flood")
    assert flood <= 2 * plain, (flood, plain)
    minutes = _calendar(dentist, _vevent("minute@test", f"{today:%Y%m%d}T000000", "Minute", "FREQ=MINUTELY"))
    _, shown = dry_run(minutes)
    assert f"The calendar flood has more than {MAX_OCCURRENCES} events in this span: {MAX_OCCURRENCES}+ more " \
           "were left out." in shown
    assert shown.count("Minute (flood)") <= 60  # the listing's own cap
