"""Trigger runs a pause or a holiday holds: kept in the state dir (``held-triggers.json``) until
the hold ends, then fired once. At most one per trigger and note: a note saved ten times during a
pause is filed once after it (the latest change counts).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from routine import atomicfile

FILE = "held-triggers.json"
_lock = threading.Lock()


@dataclass(frozen=True)
class HeldTrigger:
    """One trigger run waiting for a pause to end: the change that fired it, since when, and why."""

    trigger: str
    kind: str
    rel: str
    since: datetime
    why: str
    src: str | None = None

    @property
    def key(self) -> str:
        return f"{self.trigger}\0{self.rel}"


def load(state: Path) -> list[HeldTrigger]:
    """What waits; a file routine cannot read holds nothing (it is rewritten at the next hold)."""
    try:
        raw = json.loads((state / FILE).read_text(encoding="utf-8"))
        return [HeldTrigger(d["trigger"], d["kind"], d["rel"], datetime.fromisoformat(d["since"]), d["why"],
                            d.get("src")) for d in raw]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _save(state: Path, items: list[HeldTrigger]) -> None:
    if not items:
        (state / FILE).unlink(missing_ok=True)
        return
    state.mkdir(parents=True, exist_ok=True)
    data = [{**asdict(item), "since": item.since.isoformat()} for item in items]
    atomicfile.replace(state / FILE, json.dumps(data, indent=2) + "\n")


def hold(state: Path, item: HeldTrigger) -> bool:
    """Keep ``item`` until its hold ends; True if it is new (not a later change of a note already held)."""
    with _lock:
        items = load(state)
        kept = [i for i in items if i.key != item.key]
        first = next((i for i in items if i.key == item.key), None)
        if first is not None:  # the note waits already: its latest change, since its first
            item = HeldTrigger(item.trigger, item.kind, item.rel, first.since, item.why, item.src)
        _save(state, [*kept, item])
        return first is None


def release(state: Path, still_held: Callable[[str], str | None]) -> list[HeldTrigger]:
    """Take out of the file every item whose trigger ``still_held`` no longer holds; return them."""
    if not (state / FILE).exists():
        return []
    with _lock:
        items = load(state)
        free = [i for i in items if not still_held(i.trigger)]
        if free:
            _save(state, [i for i in items if i not in free])
        return free


def waiting(state: Path) -> tuple[str, ...]:
    """What waits, one line per trigger, for `routine status`."""
    by_trigger: dict[str, list[str]] = {}
    for item in load(state):
        by_trigger.setdefault(item.trigger, []).append(item.rel)
    return tuple(f"trigger {name}: {len(rels)} note(s) wait to fire when the pause ends ({', '.join(rels[:3])}"
                 f"{' …' if len(rels) > 3 else ''})" for name, rels in sorted(by_trigger.items()))
