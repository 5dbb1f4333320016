"""Durations as a person writes them in YAML: 90s, 10m, 2h, 1d (one number, one unit); the weekdays' names."""

from __future__ import annotations

import re
from datetime import timedelta

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")  # date.weekday() order


def parse_duration(text: str) -> timedelta:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", str(text))
    if not m:
        raise ValueError(f"{text!r} is not a duration; write e.g. 90s, 10m, 2h or 1d")
    return timedelta(seconds=float(m.group(1)) * _UNITS[m.group(2)])


def human(delta: timedelta | float) -> str:
    """'45s', '12m', '3h05m', '2d': short, for logs and tables."""
    s = int(delta.total_seconds() if isinstance(delta, timedelta) else delta)
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m"
    if s < 172800:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d"
