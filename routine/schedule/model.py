"""Typed schedule objects: blocks (timed, ordered steps) and triggers (vault events)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from routine.config.model import StepSpec, WriteSpec
from routine.config.schedule_schema import BLOCK, TRIGGER
from routine.config.schema import defaults
from routine.durations import parse_duration
from routine.schedule.cron import Cron

# Defaults are the schema's (config/schema.py), for a block the loader reads and one built in
# code (a project's cadence, a test's).
_BLOCK = defaults(BLOCK)
_TRIGGER = defaults(TRIGGER)


@dataclass(frozen=True)
class RetryPolicy:
    """How often a block retries a step that failed for a passing reason, and how long it waits."""

    attempts: int = _BLOCK["retry"]["attempts"]  # in all: 1 means no retry
    backoff: timedelta = parse_duration(_BLOCK["retry"]["backoff"])  # before the second attempt; doubled after each

    def wait_before(self, attempt: int) -> float:
        """Seconds to wait before ``attempt`` (2, 3, …)."""
        return self.backoff.total_seconds() * 2.0 ** (attempt - 2)


@dataclass(frozen=True)
class Chain:
    """``after:``: the block this one follows, and the step of it whose output it reviews (None:
    the whole block, when it ended well). ``line``: where it is written, for a loop's sentence."""

    block: str
    step: str | None = None
    line: int | None = None

    def describe(self) -> str:
        return f"{self.block}.{self.step}" if self.step else self.block


@dataclass(frozen=True)
class Block:
    id: str
    file: str
    cron: Cron
    timezone: str | None
    steps: tuple[StepSpec, ...]
    description: str = _BLOCK["description"]
    missed: str = _BLOCK["missed"]
    grace: timedelta = parse_duration(_BLOCK["grace"])
    enabled: bool = _BLOCK["enabled"]
    retry: RetryPolicy = RetryPolicy()
    project: str | None = None  # a project's cadence (derived from its home note, routine.schedule.project_cadence)
    after: Chain | None = None  # runs after another block's run instead of by the clock (`cron` is Cron.never)

    @property
    def timed(self) -> bool:
        """Whether the clock fires it (a chained block runs only after the one it follows)."""
        return self.after is None

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
    debounce: timedelta = parse_duration(_TRIGGER["debounce"])
    write: WriteSpec | None = None
    event: str | None = None  # `"on": event`: the outside event's name (`routine trigger NAME`); path is ""
    block: str | None = None  # an event's trigger that runs a block (agent is "")


@dataclass
class Schedules:
    blocks: dict[str, Block] = field(default_factory=dict)
    triggers: list[Trigger] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
