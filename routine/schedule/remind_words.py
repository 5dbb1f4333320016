"""Reminders as a person writes them, read without a model: when (`--at 15:00`, `tomorrow at 9`,
`in 2 hours`, `2026-11-28 15:00`), the Obsidian Reminder plugin's stamp on a task line
(`- [ ] Call Priya (@2026-11-28 15:00)`, `(@2026-11-28)`, or the Tasks plugin's `⏰ 2026-11-28 15:00`),
"remind me at 15:00 to call Priya" in a chat message, and the snooze choices (15m, 1h, tomorrow).

Every wall-clock time becomes an instant through the cron's one DST rule (``cron.wall_to_instant``:
a time a spring-forward skips fires at the first minute after the gap, a repeated autumn time at
its first occurrence); a duration goes through `routine pause --until`'s parser
(``pause.until_from``). A day without a time is at ``DAY_TIME`` (09:00, the Reminder plugin's
default). Every pattern is linear in its line, and a line longer than ``MAX_LINE`` is not read."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

from routine.durations import WEEKDAYS
from routine.errors import ReminderProblem
from routine.schedule.cron import wall_to_instant
from routine.schedule.pause import PauseProblem, until_from

DAY_TIME = time(9, 0)  # a day named without a time; also where `snooze tomorrow` lands
MAX_LINE = 1000  # characters of a line read for a reminder
FORMS = ("a time (15:00, 3pm: today, or tomorrow once it has passed), a day and a time (tomorrow 9:00, monday at "
         "15:00, 2026-11-28 15:00), a day alone (at 09:00), or a while (in 2 hours, 90m, 3d)")
SNOOZES = ("15m", "1h", "tomorrow")  # tomorrow: at 09:00 the next day


_CLOCK = re.compile(r"(?P<h>\d{1,2})(?:[:.](?P<m>\d{2}))?[ \t]*(?P<half>am|pm|a\.m\.|p\.m\.)?")
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_UNITS = {"s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s", "m": "m", "min": "m", "mins": "m",
          "minute": "m", "minutes": "m", "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
          "d": "d", "day": "d", "days": "d"}
_WHILE = re.compile(r"(?:in[ \t]+)?(?P<n>\d+(?:\.\d+)?|an?|one)[ \t]*(?P<unit>[a-z]+)")


def when_from(text: str, now: datetime, zone: ZoneInfo) -> datetime:
    """The instant ``text`` names (see ``FORMS``), after ``now``; else a ReminderProblem."""
    words = " ".join(text.lower().replace(",", " ").split())
    moment = _while(words, now)
    if moment is None:
        moment = _day_and_time(words, now, zone)
    if moment is None:
        raise ReminderProblem(f"{text.strip()!r} is no time routine understands.", f"write {FORMS}.")
    moment = moment.astimezone(timezone.utc)  # an autumn time that repeats compares equal to no other zone's
    if moment <= now:
        raise ReminderProblem(f"{text.strip()} is in the past.", "give a later time, or a while such as 2h.")
    return moment


def _while(words: str, now: datetime) -> datetime | None:
    """`in 2 hours`, `2h`, `90 minutes`, `an hour`: through `--until`'s parser of a duration."""
    found = _WHILE.fullmatch(words)
    if found is None or found["unit"] not in _UNITS:
        return None
    number = "1" if found["n"] in ("a", "an", "one") else found["n"]
    try:
        return until_from(f"{number}{_UNITS[found['unit']]}", now)
    except PauseProblem as exc:
        raise ReminderProblem(exc.message.replace("--until", "The reminder's time"), exc.fix) from None


def _day_and_time(words: str, now: datetime, zone: ZoneInfo) -> datetime | None:
    """A day word or date and a time of day, in either order, `at`/`on` allowed between."""
    local = now.astimezone(zone)
    day: date | None = None
    clock: time | None = None
    for part in _parts(words):
        if day is None and (found := _day(part, local.date())) is not None:
            day = found
        elif clock is None and (hour := _clock(part)) is not None:
            clock = hour
        else:
            return None
    if day is None and clock is None:
        return None
    if day is None:
        assert clock is not None
        today = wall_to_instant(datetime.combine(local.date(), clock), zone)
        return today if today > now else wall_to_instant(datetime.combine(local.date() + timedelta(days=1), clock),
                                                         zone)
    if day == local.date() and clock is None:
        return None  # "today" alone: no time to fire at
    return wall_to_instant(datetime.combine(day, clock or DAY_TIME), zone)


def _parts(words: str) -> list[str]:
    """``tomorrow at 9:00`` → [tomorrow, 9:00]; ``2026-11-28T15:00`` → [2026-11-28, 15:00]; ``3 pm`` kept whole."""
    words = re.sub(r"^(\d{4}-\d{2}-\d{2})t", r"\1 ", words)
    tokens = [t for t in words.split(" ") if t not in ("at", "on", "by", "next")]
    out: list[str] = []
    for token in tokens:
        if out and token in ("am", "pm", "a.m.", "p.m.") and _CLOCK.fullmatch(out[-1]):
            out[-1] += token
        else:
            out.append(token)
    return out


def _day(word: str, today: date) -> date | None:
    if word == "today":
        return today
    if word == "tomorrow":
        return today + timedelta(days=1)
    for number, name in enumerate(WEEKDAYS):
        if word in (name, name[:3]):
            return today + timedelta(days=(number - today.weekday()) % 7 or 7)
    if _ISO_DAY.fullmatch(word):
        try:
            return date.fromisoformat(word)
        except ValueError:
            return None
    return None


def _clock(word: str) -> time | None:
    found = _CLOCK.fullmatch(word)
    if word == "noon":
        return time(12, 0)
    if found is None or (found["m"] is None and found["half"] is None and ":" not in word and len(word) > 2):
        return None
    hour, minute = int(found["h"]), int(found["m"] or 0)
    half = (found["half"] or "").replace(".", "")
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    return time(hour, minute)


def snooze_until(choice: str, now: datetime, zone: ZoneInfo) -> datetime:
    """When a snoozed reminder fires again: ``15m`` or ``1h`` from now, ``tomorrow`` at 09:00."""
    if choice == "tomorrow":
        day = now.astimezone(zone).date() + timedelta(days=1)
        return wall_to_instant(datetime.combine(day, DAY_TIME), zone).astimezone(timezone.utc)
    if choice not in SNOOZES:
        raise ReminderProblem(f"Snooze {choice!r} is not one routine offers.", f"snooze {', '.join(SNOOZES)}.")
    moment = until_from(choice, now)
    assert moment is not None
    return moment


# --- a task line's stamp ---------------------------------------------------------------------------------

_STAMP = re.compile(r"\(@(?P<day>\d{4}-\d{2}-\d{2})(?:[ T](?P<clock>\d{1,2}:\d{2}))?\)"
                    r"|⏰[ \t]*(?P<day2>\d{4}-\d{2}-\d{2})(?:[ T](?P<clock2>\d{1,2}:\d{2}))?")


@dataclass(frozen=True)
class Stamp:
    """A reminder written on a task line: its wall time and the text without it."""

    day: date
    clock: time
    text: str
    written: str  # the stamp as written (part of the reminder's identity)

    def instant(self, zone: ZoneInfo) -> datetime:
        return wall_to_instant(datetime.combine(self.day, self.clock), zone).astimezone(timezone.utc)


def stamp_of(text: str) -> Stamp | None:
    """The Reminder plugin's stamp in a task's text (`Call Priya (@2026-11-28 15:00)`), or None."""
    if len(text) > MAX_LINE:
        return None
    found = _STAMP.search(text)
    if found is None:
        return None
    day_text, clock_text = found["day"] or found["day2"], found["clock"] or found["clock2"]
    try:
        day = date.fromisoformat(day_text)
        clock = _clock(clock_text) if clock_text else DAY_TIME
    except ValueError:
        return None
    if clock is None:
        return None
    rest = " ".join((text[:found.start()] + text[found.end():]).split())
    return Stamp(day, clock, rest, found[0]) if rest else None


# --- "remind me … to …" in a chat message ------------------------------------------------------------------

_ASK = re.compile(r"\bremind me\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")


@dataclass(frozen=True)
class Asked:
    """A reminder asked for in words: what, and when."""

    text: str
    at: datetime
    said: str  # the sentence as written


def asked_in(message: str, now: datetime, zone: ZoneInfo) -> list[Asked]:
    """Each "remind me WHEN to WHAT" (or "remind me to WHAT WHEN") in ``message`` whose time reads
    as one (``when_from``); other sentences, and a time already past, are not reminders."""
    out: list[Asked] = []
    for sentence in _SENTENCE_END.split(message):
        sentence = sentence.strip()
        if len(sentence) > MAX_LINE:
            continue
        ask = _ASK.search(sentence)
        if ask is None:
            continue
        found = _read_ask(sentence[ask.end():].strip().rstrip(".!?").strip(), now, zone)
        if found is not None:
            out.append(Asked(found[0], found[1], sentence))
    return out


def _read_ask(rest: str, now: datetime, zone: ZoneInfo) -> tuple[str, datetime] | None:
    words = rest.split()
    lowered = [w.lower() for w in words]
    if lowered[:1] == ["to"]:  # remind me to WHAT WHEN: the longest time at the end that reads as one
        for cut in range(2, len(words)):
            at = _quiet_when(" ".join(words[cut:]), now, zone)
            if at is not None:
                return " ".join(words[1:cut]), at
        return None
    for cut, word in enumerate(lowered):  # remind me WHEN to WHAT
        if word == "to" and 0 < cut < len(words) - 1:
            at = _quiet_when(" ".join(words[:cut]), now, zone)
            if at is not None:
                return " ".join(words[cut + 1:]), at
    return None


def _quiet_when(text: str, now: datetime, zone: ZoneInfo) -> datetime | None:
    try:
        return when_from(text, now, zone)
    except ReminderProblem:
        return None
