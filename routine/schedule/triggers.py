"""Which of a schedule's note triggers a change of the vault matches: its ``on`` (the kind of
change), its ``path`` glob and its ``where`` (the note's properties), and how long a note must be
still before its change counts (the longest ``debounce`` of the triggers watching it).

Pure: it reads the note's properties for ``where`` and nothing else; the daemon fires what matches
(``flows/reactions.py`` decides, ``daemon/vault_events.py`` applies)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from routine.errors import RoutineError
from routine.schedule.model import Trigger
from routine.vault.notes import read_note
from routine.vault.scope import glob_match


def matches(vault: Path, trigger: Trigger, kind: str, rel: str) -> bool:
    """``trigger`` fires on a ``kind`` change of the note at ``rel``."""
    if trigger.on != kind or not glob_match(trigger.path, rel):
        return False
    if not trigger.where:
        return True
    if kind == "deleted":
        return False  # nothing left to look at
    try:
        properties = read_note(vault, rel).frontmatter
    except (OSError, RoutineError):  # gone, a pipe, past the size cap: no properties to match
        return False
    return all(property_matches(properties.get(key), wanted) for key, wanted in trigger.where)


def matching(vault: Path, triggers: Iterable[Trigger], kind: str, rel: str) -> list[Trigger]:
    """The triggers a change fires, in the schedule's order."""
    return [trigger for trigger in triggers if matches(vault, trigger, kind, rel)]


def debounce_for(triggers: Iterable[Trigger], rel: str) -> float:
    """Seconds a note must be still for the triggers watching it (0 when none does)."""
    return max((t.debounce.total_seconds() for t in triggers if glob_match(t.path, rel)), default=0.0)


def property_matches(value: object, wanted: object) -> bool:
    """`where: {status: inbox}` matches status: inbox; on a list property (tags), membership."""
    def norm(v: object) -> object:
        return str(v).strip().lstrip("#").lower() if isinstance(v, str) else v

    if isinstance(value, list):
        return norm(wanted) in [norm(v) for v in value]
    return norm(value) == norm(wanted)
