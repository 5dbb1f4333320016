"""Five-field cron, computed in the person's local wall-clock time, DST-correct.

Our own small parser rather than APScheduler's CronTrigger because (a) APScheduler numbers
weekdays from Monday=0 while every cron a person has ever written has Sunday=0, and (b) we
need exactly-once semantics on DST days, which we define here:

- a time skipped by spring-forward (02:30 on that night) fires once, at the first minute
  that exists after the gap (03:00);
- a time repeated by fall-back (02:30 twice) fires once, at its first occurrence.

Every fire time is an aware datetime; the slot key of a run is its UTC instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from functools import cached_property
from zoneinfo import ZoneInfo

MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}
DAYS = {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}
MACROS = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
          "@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *"}
FIELDS = [("minute", 0, 59, {}), ("hour", 0, 23, {}), ("day of month", 1, 31, {}),
          ("month", 1, 12, MONTHS), ("day of week", 0, 7, DAYS)]
SEARCH_YEARS = 5
MONTH_DAYS = {1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}


class CronError(ValueError):
    """One clear sentence about what is wrong with a cron expression."""


def _value(token: str, name: str, lo: int, hi: int, names: dict[str, int]) -> int:
    key = token.lower()
    if key in names:
        return names[key]
    if not key.isdigit():
        raise CronError(
            f"{token!r} is not a valid {name}"
            + (f" (use {lo}-{hi} or names like {next(iter(names))})" if names else f" (use {lo}-{hi})")
        )
    n = int(key)
    if not lo <= n <= hi:
        raise CronError(f"{name} {n} is out of range {lo}-{hi}")
    return n


def _field(text: str, name: str, lo: int, hi: int, names: dict[str, int]) -> tuple[frozenset[int], bool]:
    """Parse one field; returns (allowed values, whether it was '*')."""
    values: set[int] = set()
    for part in text.split(","):
        if not part:
            raise CronError(f"empty item in {name} field {text!r}")
        base, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"step {step_text!r} in {name} must be a positive number")
            step = int(step_text)
        if base == "*":
            start, end = lo, hi
        elif "-" in base:
            a, b = base.split("-", 1)
            start, end = _value(a, name, lo, hi, names), _value(b, name, lo, hi, names)
            if start > end:
                raise CronError(f"range {base!r} in {name} runs backwards")
        else:
            start = _value(base, name, lo, hi, names)
            end = hi if step_text else start
        values.update(range(start, end + 1, step))
    return frozenset(values), text == "*"


@dataclass(frozen=True)
class Cron:
    expr: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool
    any_weekday: bool

    @classmethod
    def parse(cls, expr: str) -> "Cron":
        text = MACROS.get(expr.strip().lower(), expr.strip())
        parts = text.split()
        if len(parts) != 5:
            raise CronError(
                f"{expr!r} has {len(parts)} fields; cron needs 5: minute hour day-of-month month day-of-week"
            )
        parsed = [_field(p, *spec) for p, spec in zip(parts, FIELDS)]
        weekdays = frozenset(d % 7 for d in parsed[4][0])  # 7 is Sunday too
        if parsed[4][1] and not any(d <= MONTH_DAYS[m] for m in parsed[3][0] for d in parsed[2][0]):
            days = ", ".join(map(str, sorted(parsed[2][0])))
            raise CronError(f"{expr!r} never fires: no month it names has day {days}")
        return cls(expr, parsed[0][0], parsed[1][0], parsed[2][0], parsed[3][0], weekdays, parsed[2][1], parsed[4][1])

    @classmethod
    def never(cls, label: str) -> "Cron":
        """A block with no time of its own (one chained `after:` another): it never comes due.
        ``label`` is what `schedule list` shows in the cron's place."""
        empty: frozenset[int] = frozenset()
        return cls(label, empty, empty, empty, empty, empty, False, False)

    def matches_day(self, d: date) -> bool:
        if d.month not in self.months:
            return False
        dom, dow = d.day in self.days, (d.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return dom and dow  # one of them is '*', so this is just the other
        return dom or dow  # both restricted: classic cron fires when either matches

    def times_of_day(self) -> list[time]:
        return list(self._times)

    @cached_property
    def _times(self) -> tuple[time, ...]:
        return tuple(time(h, m) for h in sorted(self.hours) for m in sorted(self.minutes))

    def next_after(self, after: datetime, tz: ZoneInfo) -> datetime | None:
        """The first fire time strictly after ``after`` (aware), in ``tz``."""
        # Compare in UTC: same-tzinfo comparisons ignore `fold` and would misorder DST times.
        after_utc = after.astimezone(timezone.utc)
        day = after.astimezone(tz).date()
        times = self._times
        if not times or not self.months:  # Cron.never
            return None
        for _ in range(366 * SEARCH_YEARS):
            if self.matches_day(day):
                # A day's fire instants never decrease as its wall times increase (a skipped
                # time moves to just after the gap, a repeated one to its first occurrence), so
                # a binary search finds the first one after `after` with a dozen conversions.
                lo, hi = 0, len(times)
                while lo < hi:
                    mid = (lo + hi) // 2
                    if wall_to_instant(datetime.combine(day, times[mid]), tz).astimezone(timezone.utc) > after_utc:
                        hi = mid
                    else:
                        lo = mid + 1
                if lo < len(times):
                    return wall_to_instant(datetime.combine(day, times[lo]), tz)
            day += timedelta(days=1)
        return None

    def between(self, start: datetime, end: datetime, tz: ZoneInfo) -> list[datetime]:
        """Fire times in (start, end]."""
        out: list[datetime] = []
        cursor = start
        while True:
            nxt = self.next_after(cursor, tz)
            if nxt is None or nxt.astimezone(timezone.utc) > end.astimezone(timezone.utc):
                return out
            out.append(nxt)
            cursor = nxt


def wall_to_instant(naive: datetime, tz: ZoneInfo) -> datetime:
    """A local wall-clock time as an aware instant, with our DST rules (see module doc)."""
    aware = naive.replace(tzinfo=tz, fold=0)  # fold=0: the first of a repeated time
    if _exists(aware):
        return aware
    probe = naive
    for _ in range(24 * 60):  # skipped: the first minute that exists after the gap
        probe += timedelta(minutes=1)
        candidate = probe.replace(tzinfo=tz, fold=0)
        if _exists(candidate):
            return candidate
    return aware


def _exists(aware: datetime) -> bool:
    round_trip = aware.astimezone(timezone.utc).astimezone(aware.tzinfo)
    return round_trip.replace(tzinfo=None) == aware.replace(tzinfo=None)


def slot_key(fire: datetime) -> str:
    """The run key of a scheduled slot: its UTC instant, to the minute."""
    return fire.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")


def is_dst_shifted(fire: datetime, naive_wanted: time) -> bool:
    return fire.timetz().replace(tzinfo=None) != naive_wanted
