"""What the vault watcher reports: a ``Change`` per settled save, and for every path that
settled (change or not) a ``Settled`` record of what it turned out to be."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TypedDict

from routine.watch.filters import is_note


@dataclass(frozen=True)
class Change:
    kind: str               # created | modified | deleted | moved
    rel: str                # vault-relative path (for moved: where it is now)
    src: str | None = None  # moved: where it was
    source: str = "watch"   # watch | reconcile
    # A note (not a PDF, which only the search index reads): known when the change is made, so
    # what reacts to it reads a fact of the change and need not ask the watcher's filters again.
    note: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "note", is_note(self.rel))


class Outcome(str, Enum):
    """What a path that settled turned out to be."""

    CHANGE = "change"            # a Change was reported (its kind says which)
    OWN_WRITE = "own write"      # the bytes routine itself wrote there: not a change
    UNCHANGED = "unchanged"      # the same bytes as before (a save without an edit, a touch)
    GONE = "gone"                # nothing there, and nothing known of it
    UNREADABLE = "unreadable"    # there, but not a file routine reads (logged)


class SettledRecord(TypedDict):
    """A settled path as status shows it (``daemon.status_record.SettledPath`` takes these keys)."""

    path: str
    outcome: str  # an ``Outcome`` value, or the change's kind
    at: float


@dataclass(frozen=True)
class Settled:
    """One path settled: what it was, and the change reported for it (if any). The last few are
    in `routine status --json` (``vault_watch.recent``): why a save did or did not fire a trigger."""

    rel: str
    outcome: Outcome
    change: Change | None = None
    at: float = 0.0  # time.time()

    def as_dict(self) -> SettledRecord:
        return {"path": self.rel, "outcome": self.change.kind if self.change else self.outcome.value,
                "at": self.at}


RECENT = 20  # settled paths remembered for status
