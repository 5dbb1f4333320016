"""Routine's time zone: `timezone:` in routine.yaml, else the machine's; the one place it is resolved,
so every time shown to the person reads on the same clock."""

from __future__ import annotations

import os
from datetime import datetime


def machine_zone_name() -> str:
    """The machine's IANA zone (its TZ, else /etc/localtime), UTC when neither names one."""
    key = getattr(datetime.now().astimezone().tzinfo, "key", None)
    if key:
        return str(key)
    env = os.environ.get("TZ", "").lstrip(":")
    if env and "/" in env and not env.startswith("/"):
        return env
    link = os.path.realpath("/etc/localtime")
    return link.split("zoneinfo/", 1)[1] if "zoneinfo/" in link else "UTC"

