"""Pauses: the whole schedule or some blocks held until a time, or until `routine resume`; and the
holidays routine.yaml names (`holiday:`), on which nothing scheduled runs.

A pause is the person's word, kept in the state dir (`pause.json`, written atomically); the
daemon asks it each time a block comes due (no polling), so `routine pause` needs no daemon
and takes effect at the next slot. A paused slot is journaled `skipped` with the reason, never
`missed`, and raises no alert. `routine fire` still runs what the person fires.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from pathlib import Path

from routine import atomicfile
from routine.durations import WEEKDAYS, parse_duration
from routine.errors import EXIT_USAGE, RoutineError
from routine.schedule import held
from routine.statedb import set_aside

FILE = "pause.json"
EVERYTHING = "*"  # the key of a pause of the whole schedule
HOLIDAYS_AHEAD = timedelta(days=7)  # a holiday this near is shown beside what is paused now
LATEST = datetime(9000, 1, 1, tzinfo=timezone.utc)  # the latest end a pause may have: any zone, any sum holds it


class PauseProblem(RoutineError):
    """A pause the person asked for cannot be understood."""

    exit_code = EXIT_USAGE


@dataclass(frozen=True)
class Hold:
    """One pause: since when, and until when (None: until `routine resume`)."""

    since: datetime
    until: datetime | None = None

    def holds_at(self, at: datetime) -> bool:
        return self.until is None or at < self.until

    def describe(self, zone: tzinfo) -> str:
        return f"until {self.until.astimezone(zone):%a %d %b %Y %H:%M}" if self.until else "until resumed"


@dataclass(frozen=True)
class Pauses:
    """What is paused: ``holds`` by block id, ``EVERYTHING`` for the whole schedule."""

    holds: dict[str, Hold] = field(default_factory=dict)

    def active(self, at: datetime) -> dict[str, Hold]:
        return {name: hold for name, hold in self.holds.items() if hold.holds_at(at)}


@dataclass(frozen=True)
class Why:
    """What holds a block (or trigger) at a moment: ``text`` as journaled (``skipped: paused …``);
    ``holiday``: a holiday holds it (it ends as the next day begins, not at `routine resume`)."""

    text: str
    holiday: bool


def why_held(
    pauses: Pauses, holidays: tuple[tuple[date, date], ...], block: str, at: datetime, zone: tzinfo
) -> Why | None:
    """The one resolver of a hold: what holds ``block``'s slot (or trigger's run) at ``at``, or None."""
    day = at.astimezone(zone).date()
    for first, last in holidays:
        if first <= day <= last:
            return Why(f"skipped: paused, {day.isoformat()} is a holiday (`holiday:` in routine.yaml)", True)
    for name in (EVERYTHING, block):
        hold = pauses.holds.get(name)
        if hold and hold.holds_at(at):
            what = "the schedule is paused" if name == EVERYTHING else f"the block {block} is paused"
            return Why(f"skipped: paused, {what} {hold.describe(zone)} (`routine resume` ends it)", False)
    return None


def reason(
    pauses: Pauses, holidays: tuple[tuple[date, date], ...], block: str, at: datetime, zone: tzinfo
) -> str | None:
    """Why ``block``'s slot at ``at`` does not run (``skipped: paused …``), or None if it runs."""
    why = why_held(pauses, holidays, block, at, zone)
    return why.text if why else None


FORMS = ("a duration (90m, 12h, 3d), a date (2026-12-27: the pause ends as that day begins), a date and time "
         "(2026-12-27T08:00), tomorrow (until tomorrow begins), or a weekday (monday … sunday, or mon … sun: "
         "until the next one begins)")


def until_from(text: str | None, now: datetime) -> datetime | None:
    """``--until``, the one parser of it: a duration (3d, 2h); a date (the pause ends as that day
    begins) or a date and time; ``tomorrow``; a weekday name (``monday``, ``mon``: the start of the
    next such day, a week on when it is that day now). Days begin at midnight in ``now``'s zone
    (the daemon's: `timezone:` in routine.yaml)."""
    if not text:
        return None
    text = text.strip()
    try:
        span = parse_duration(text)
    except (ValueError, RoutineError):
        pass
    except OverflowError:
        raise _too_far(text) from None
    else:
        if span <= timedelta(0):
            raise PauseProblem(f"--until {text} would end the pause as it begins, so nothing was paused.",
                               "give a longer duration (10m, 3d), or pause without --until: it holds until "
                               "`routine resume`.")
        try:
            return _holdable(now + span, text)
        except OverflowError:
            raise _too_far(text) from None
    ahead = _days_ahead(text.lower(), now.date())
    if ahead is not None:
        return _day_start(now.date() + timedelta(days=ahead), now.tzinfo)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise PauseProblem(f"--until {text!r} is neither a duration nor a date, nor a day routine knows.",
                           f"write {FORMS}.") from None
    moment = _holdable(moment if moment.tzinfo else moment.replace(tzinfo=now.tzinfo), text)
    if moment <= now:
        raise PauseProblem(f"--until {text} is in the past.", "give a later date, or a duration such as 3d.")
    return moment


def _holdable(moment: datetime, text: str) -> datetime:
    """``moment`` if the clock can hold it in any zone (before ``LATEST``), else a PauseProblem."""
    try:
        if moment.astimezone(timezone.utc) < LATEST and moment.year < LATEST.year:  # as the person wrote it too
            return moment
    except (OverflowError, ValueError):
        pass
    raise _too_far(text)


def _too_far(text: str) -> PauseProblem:
    return PauseProblem(f"--until {text} is further ahead than routine's clock can hold (before the year "
                        f"{LATEST.year}).", "pause without --until: it holds until `routine resume`.")


def _days_ahead(word: str, today: date) -> int | None:
    """How many days from ``today`` the day ``word`` names begins (tomorrow, a weekday), or None."""
    if word == "tomorrow":
        return 1
    for number, name in enumerate(WEEKDAYS):
        if word in (name, name[:3]):
            return (number - today.weekday() - 1) % 7 + 1  # 1..7: never today, whose start is past
    return None


def _day_start(day: date, zone: tzinfo | None) -> datetime:
    """Local midnight of ``day`` (on a day with no midnight, a DST gap, the first moment after it)."""
    start = datetime.combine(day, time(0), zone)
    return start.astimezone(timezone.utc).astimezone(zone) if zone is not None else start


def load(state: Path) -> Pauses:
    """The pauses in force as written. A file that cannot be read, or holds a time the clock cannot
    (tampered, or written by an older version), is set aside like a damaged journal
    (``routine.statedb``: the daemon's health monitor raises its one alert) and pauses nothing."""
    try:
        raw = json.loads((state / FILE).read_text(encoding="utf-8"))
        return Pauses({name: Hold(_stored(h["since"]), _stored(h["until"]) if h.get("until") else None)
                       for name, h in raw.get("holds", {}).items()})
    except FileNotFoundError:
        return Pauses()
    except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
        set_aside(state / FILE, f"unreadable: {exc}; nothing is paused")
        return Pauses()


def _stored(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None or not moment.astimezone(timezone.utc) < LATEST:
        raise ValueError(f"{text} is no time the clock can hold")
    return moment


def save(state: Path, pauses: Pauses) -> None:
    data = {"holds": {name: {"since": h.since.isoformat(), "until": h.until.isoformat() if h.until else None}
                      for name, h in sorted(pauses.holds.items())}}
    state.mkdir(parents=True, exist_ok=True)
    atomicfile.replace(state / FILE, json.dumps(data, indent=2) + "\n")


def pause(state: Path, blocks: list[str], until: datetime | None, now: datetime) -> Pauses:
    current = load(state).active(now)
    for name in blocks or [EVERYTHING]:
        current[name] = Hold(since=now, until=until)
    result = Pauses(current)
    save(state, result)
    return result


def resume(state: Path, blocks: list[str], now: datetime) -> tuple[Pauses, list[str]]:
    """End the pauses of ``blocks`` (all of them when none are named); returns what was ended."""
    current = load(state).active(now)
    names = list(current) if not blocks else [b for b in blocks if b in current]
    for name in names:
        del current[name]
    result = Pauses(current)
    save(state, result)
    return result, names



def holder(
    state: Path, holidays: tuple[tuple[date, date], ...], name: str, zone: tzinfo
) -> Callable[[datetime], str | None]:
    """``reason`` for block (or trigger) ``name`` with the pauses as written now: what the daemon
    asks when a block comes due or a trigger fires."""
    pauses = load(state)
    return lambda at: reason(pauses, holidays, name, at, zone)


def held_note(why: str | None) -> str:
    """A slot's ``reason`` as a listing of coming fires says it: `held: the schedule is paused until …`."""
    return why.replace("skipped: paused, ", "held: ", 1) if why else ""


def held_slots(
    state: Path, holidays: tuple[tuple[date, date], ...], zone: tzinfo
) -> Callable[[str, datetime], str | None]:
    """``reason`` for any block's slot, the pauses read once: for what plans ahead (`schedule next`,
    `models plan`, the preloader), so a held slot is shown as held and no model is loaded for it."""
    pauses = load(state)
    return lambda name, at: reason(pauses, holidays, name, at, zone)


def next_end(state: Path, holidays: tuple[tuple[date, date], ...], now: datetime, zone: tzinfo) -> datetime | None:
    """When the earliest hold in force now ends (a pause with ``--until``, or a holiday today: the
    next day begins), or None when nothing holds now or only `routine resume` ends it: when the
    daemon looks again at the trigger runs it holds (a timer, no polling)."""
    ends = [h.until for h in load(state).active(now).values() if h.until is not None]
    today = now.astimezone(zone).date()
    ends += [_day_start(last + timedelta(days=1), zone) for first, last in holidays if first <= today <= last]
    return min(ends) if ends else None


def in_force(state: Path, holidays: tuple[tuple[date, date], ...], now: datetime, zone: tzinfo) -> tuple[str, ...]:
    """What is paused now, the holidays of the coming week and what waits, one line each, each
    saying what ends it, for `routine status`, `routine pause|resume` and the dashboard."""
    today = now.astimezone(zone).date()
    lines = [f"everything today: a holiday ({first.isoformat()}{'' if first == last else '..' + last.isoformat()}), "
             f"until {last + timedelta(days=1):%a %d %b %Y} begins (`holiday:` in routine.yaml; `routine resume` "
             "does not end it)" for first, last in holidays if first <= today <= last]
    lines += [f"everything {'tomorrow' if first == today + timedelta(days=1) else 'from'} {first:%a %d %b}"
              f"{'' if first == last else f' to {last:%a %d %b}'}: a holiday (`holiday:` in routine.yaml)"
              for first, last in holidays if today < first <= today + HOLIDAYS_AHEAD]
    pauses = load(state)
    for name, hold in sorted(pauses.active(now).items()):
        lines.append(f"{'everything' if name == EVERYTHING else name} {hold.describe(zone)} (`routine resume` ends it)")
    return tuple(lines) + held.waiting(state, lambda name: _ends(why_held(pauses, holidays, name, now, zone)))


def shown(line: str) -> str:
    """A line of ``in_force`` as `routine status` and `routine pause|resume` print it: ``paused: …``,
    but for runs nothing holds any longer (they fire now)."""
    return line if held.FREE in line else f"paused: {line}"


def _ends(why: Why | None) -> str | None:
    """When what ``why`` holds fires: as the holiday ends, as the pause ends; None: now."""
    if why is None:
        return None
    if why.holiday:
        return "when the holiday ends (`routine resume` does not end it)"
    return "when the pause ends (`routine resume` ends it)"
