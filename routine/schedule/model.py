"""Typed schedule objects: blocks (timed, ordered steps) and triggers (vault events)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from routine.config.model import StepSpec, WriteSpec
from routine.durations import parse_duration  # noqa: F401  (schedule files' durations)
from routine.schedule.cron import Cron


@dataclass(frozen=True)
class RetryPolicy:
    """How often a block retries a step that failed for a passing reason, and how long it waits."""

    attempts: int = 1  # in all: 1 means no retry
    backoff: timedelta = timedelta(seconds=30)  # before the second attempt; doubled after each

    def wait_before(self, attempt: int) -> float:
        """Seconds to wait before ``attempt`` (2, 3, …)."""
        return self.backoff.total_seconds() * 2 ** (attempt - 2)


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
    retry: RetryPolicy = RetryPolicy()

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
