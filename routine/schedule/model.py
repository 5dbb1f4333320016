"""Typed schedule objects: blocks (timed, ordered steps) and triggers (vault events)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta

from routine.config.model import StepSpec, WriteSpec
from routine.schedule.cron import Cron

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> timedelta:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", str(text))
    if not m:
        raise ValueError(f"{text!r} is not a duration; write e.g. 90s, 10m, 2h or 1d")
    return timedelta(seconds=float(m.group(1)) * _UNITS[m.group(2)])


@dataclass(frozen=True)
class Block:
    id: str
    file: str
    cron: Cron
    timezone: str | None
    steps: tuple[StepSpec, ...]
    description: str = ""
    missed: str = "catch-up"
    grace: timedelta = timedelta(hours=1)
    enabled: bool = True

    @property
    def agents(self) -> list[str]:
        return [s.agent for s in self.steps]


@dataclass(frozen=True)
class Trigger:
    id: str  # "<file stem>#<index>", stable while the file's order is
    file: str
    on: str
    path: str
    agent: str
    task: str | None = None
    where: tuple[tuple[str, object], ...] = ()
    debounce: timedelta = timedelta(seconds=10)
    write: WriteSpec | None = None


@dataclass
class Schedules:
    blocks: dict[str, Block] = field(default_factory=dict)
    triggers: list[Trigger] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
