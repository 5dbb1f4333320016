"""Time tools: small models are bad at calendar arithmetic, so they ask instead of guessing."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from routine.durations import WEEKDAYS
from routine.tools.base import ToolContext, ToolError, tool

_UNIT = {"m": "minutes", "min": "minutes", "minute": "minutes", "minutes": "minutes", "h": "hours", "hour": "hours",
         "hours": "hours", "d": "days", "day": "days", "days": "days", "w": "weeks", "week": "weeks", "weeks": "weeks"}
_PART = re.compile(r"([+-]?\d+)\s*([a-z]+)")


def _zone(name: str, ctx: ToolContext) -> ZoneInfo:
    if not name:
        return ctx.now.tzinfo if isinstance(ctx.now.tzinfo, ZoneInfo) else ZoneInfo(ctx.config.timezone or "UTC")
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(
            f"Unknown time zone {name!r}; use an IANA name such as Europe/Berlin or America/New_York."
        ) from None


def _describe(moment: datetime) -> str:
    iso = moment.isocalendar()
    return (f"{moment:%A %Y-%m-%d %H:%M} ({moment.tzname()}, UTC{moment:%z}); "
            f"ISO week {iso.year}-W{iso.week:02d}; ISO {moment.isoformat(timespec='minutes')}")


@tool("now", "The current date, time, weekday and ISO week, in the person's time zone or another one.",
      {"timezone": {"type": "string", "description": "an IANA time zone such as Asia/Tokyo; empty for the person's"}})
def now(ctx: ToolContext, timezone: str = "") -> str:
    return _describe(ctx.now.astimezone(_zone(timezone, ctx)))


@tool("date_math", "Date and time arithmetic: add or subtract a duration, find the next weekday, or convert "
      "to another time zone. Example: start '2026-11-27', add '3 days', next_weekday 'monday'.",
      {"start": {"type": "string", "description": "a date or date-time (ISO, e.g. 2026-11-27 or 2026-11-27T14:00); "
                                                   "empty for now"},
       "add": {"type": "string", "description": "a duration like '3 days', '-2h', '1 week 2 days', '90 minutes'"},
       "next_weekday": {"type": "string", "description": "a weekday name: the first such day after the start"},
       "timezone": {"type": "string", "description": "an IANA time zone to express the result in"}})
def date_math(ctx: ToolContext, start: str = "", add: str = "", next_weekday: str = "", timezone: str = "") -> str:
    zone = _zone("", ctx)
    moment = ctx.now.astimezone(zone) if not start.strip() else _parse(start.strip(), zone)
    if add.strip():
        moment = moment + _duration(add)
    if next_weekday.strip():
        day = next_weekday.strip().lower()
        match = [i for i, name in enumerate(WEEKDAYS) if name.startswith(day[:3])] if len(day) >= 3 else []
        if not match:
            raise ToolError(f"{next_weekday!r} is not a weekday; use monday … sunday.")
        ahead = (match[0] - moment.weekday()) % 7 or 7
        moment = moment + timedelta(days=ahead)
    if timezone.strip():
        moment = moment.astimezone(_zone(timezone, ctx))
    return _describe(moment)


def _parse(text: str, zone: ZoneInfo) -> datetime:
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return datetime.combine(date.fromisoformat(text), datetime.min.time(), zone)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ToolError(f"{text!r} is not a date; write it as 2026-11-27 or 2026-11-27T14:00.") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=zone)


def _duration(text: str) -> timedelta:
    parts = _PART.findall(text.lower().replace(",", " "))
    if not parts or not re.fullmatch(r"[\s+\-\d a-z,]+", text.lower()):
        raise ToolError(f"{text!r} is not a duration; write it like '3 days', '-2h' or '1 week 2 days'.")
    total = timedelta()
    for number, unit in parts:
        if unit not in _UNIT:
            raise ToolError(f"Unknown unit {unit!r} in {text!r}; use minutes, hours, days or weeks.")
        total += timedelta(**{_UNIT[unit]: int(number)})
    return total
