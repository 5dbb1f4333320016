"""Runs a pause or a holiday holds: kept in the state dir (``held-triggers.json``) until the hold
ends, then fired once. What waits (``Origin``): a vault trigger's run on a note (at most one per
trigger and note: a note saved ten times during a pause is filed once after it, the latest change
counts); an outside event's trigger run (one per trigger and payload); a project manager's
reaction to its home note (one per note); task pickup in a project (read from its notes again).
Whether a hold still holds is ``schedule.pause``'s to say (``still_held``, ``when``): one resolver.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum
from pathlib import Path

from routine import atomicfile
from routine.jsonvalue import JSONObject

FILE = "held-triggers.json"
PROJECTS = "projects"  # the name a pause holds pickups and reactions by (a pause of everything holds it)
FREE = "held no longer"  # said of what waits though nothing holds it now: it fires now (or as the daemon starts)
_lock = threading.Lock()


class Origin(str, Enum):
    NOTE = "note"  # a vault trigger's run on a note's change
    EVENT = "event"  # an outside event's trigger run (`routine trigger`, the webhook), with its payload
    REACTION = "reaction"  # a project manager's reaction to its home note
    PICKUP = "pickup"  # task pickup in a project folder ("": every project)


@dataclass(frozen=True)
class HeldTrigger:
    """One run waiting for a pause to end: what fired it, since when, and why. ``trigger``: the
    trigger's id (the manager's name for a reaction); ``kind``: the change (the event's name for an
    event); ``rel``: the note (the event's name; the project folder of a pickup); ``payload``: an
    event's payload, a reaction's project (``project``, ``slug``), kept as data."""

    trigger: str
    kind: str
    rel: str
    since: datetime
    why: str
    src: str | None = None
    origin: Origin = Origin.NOTE
    payload: JSONObject | None = None

    @property
    def key(self) -> str:
        payload = json.dumps(self.payload, sort_keys=True) if self.payload is not None else ""
        return f"{self.origin.value}\0{self.trigger}\0{self.rel}\0{payload}"

    @property
    def holder(self) -> str:
        """The name a pause holds it by: its trigger's id, or ``PROJECTS``."""
        return PROJECTS if self.origin in (Origin.REACTION, Origin.PICKUP) else self.trigger


def load(state: Path) -> list[HeldTrigger]:
    """What waits; a file routine cannot read holds nothing (it is rewritten at the next hold)."""
    try:
        raw = json.loads((state / FILE).read_text(encoding="utf-8"))
        return [HeldTrigger(d["trigger"], d["kind"], d["rel"], datetime.fromisoformat(d["since"]), d["why"],
                            d.get("src"), Origin(d.get("origin", Origin.NOTE.value)), d.get("payload"))
                for d in raw]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _save(state: Path, items: list[HeldTrigger]) -> None:
    if not items:
        (state / FILE).unlink(missing_ok=True)
        return
    state.mkdir(parents=True, exist_ok=True)
    data = [{"trigger": i.trigger, "kind": i.kind, "rel": i.rel, "since": i.since.isoformat(), "why": i.why,
             "src": i.src, "origin": i.origin.value, **({"payload": i.payload} if i.payload is not None else {})}
            for i in items]
    atomicfile.replace(state / FILE, json.dumps(data, indent=2) + "\n")


def hold(state: Path, item: HeldTrigger) -> bool:
    """Keep ``item`` until its hold ends; True if it is new (not a later change of a note already held)."""
    with _lock:
        items = load(state)
        kept = [i for i in items if i.key != item.key]
        first = next((i for i in items if i.key == item.key), None)
        if first is not None:  # it waits already: its latest change, since its first
            item = replace(item, since=first.since)
        _save(state, [*kept, item])
        return first is None


def release(state: Path, still_held: Callable[[HeldTrigger], str | None]) -> list[HeldTrigger]:
    """Take out of the file every item ``still_held`` no longer holds; return them."""
    if not (state / FILE).exists():
        return []
    with _lock:
        items = load(state)
        free = [i for i in items if not still_held(i)]
        if free:
            _save(state, [i for i in items if i not in free])
        return free


def waiting(state: Path, when: Callable[[str], str | None]) -> tuple[str, ...]:
    """What waits, one line per trigger (per manager; one for pickups), for `routine status`.
    ``when``: for a holder's name, when its hold ends (``schedule.pause``), None when nothing holds
    it any longer (a resume the daemon has yet to act on, or no daemon running to fire it)."""
    groups: dict[tuple[Origin, str], list[HeldTrigger]] = {}
    for item in load(state):
        groups.setdefault((item.origin, item.trigger), []).append(item)
    return tuple(_line(origin, name, items, when(items[0].holder))
                 for (origin, name), items in sorted(groups.items(), key=lambda g: (g[0][0].value, g[0][1])))


def _line(origin: Origin, name: str, items: list[HeldTrigger], when: str | None) -> str:
    rels = list(dict.fromkeys(i.rel or "every project" for i in items))
    listed = ", ".join(rels[:3]) + (" …" if len(rels) > 3 else "")
    if origin is Origin.PICKUP:
        return f"task pickup in {listed} " + (f"waits to run {when}" if when else f"is {FREE}: it runs now")
    if origin is Origin.REACTION:
        return f"{name}'s reaction(s) to {listed} " + (f"wait to run {when}" if when else f"are {FREE}: they run now")
    what = f"trigger {name}: {len(items)} {'event' if origin is Origin.EVENT else 'note'}(s)"
    return f"{what} " + (f"wait to fire {when}: {listed}" if when else f"are {FREE}, they fire now: {listed}")
