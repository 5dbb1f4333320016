"""Two blocks writing the same section of the same note at the same minute would race."""

from __future__ import annotations

from datetime import date, timedelta

from routine.errors import Problem
from routine.schedule.model import Block
from routine.templating import fill


def _targets(block: Block) -> set[tuple[str, str]]:
    # The schema allows a section only with a note (never with append). A step's own values
    # (a project's folder) are filled in: two projects' digests are two notes.
    return {(fill(s.write.note, dict(s.variables)), fill(s.write.section, dict(s.variables)))
            for s in block.steps if s.write and s.write.note and s.write.section}


def _share_a_minute(a: Block, b: Block) -> bool:
    if not (a.cron.minutes & b.cron.minutes and a.cron.hours & b.cron.hours):
        return False
    day = date(2026, 1, 1)
    for _ in range(400):  # a year and a bit covers every month/weekday combination
        if a.cron.matches_day(day) and b.cron.matches_day(day):
            return True
        day += timedelta(days=1)
    return False


def section_clashes(blocks: list[Block]) -> list[Problem]:
    """Linear in the number of blocks: only blocks writing one section at one wall-clock
    minute are compared (bucketed by target, hour and minute), and each block is reported once."""
    problems: list[Problem] = []
    buckets: dict[tuple[tuple[str, str], int, int], list[Block]] = {}
    reported: set[str] = set()
    for b in blocks:
        if b.cron is None:
            continue
        candidates: dict[str, tuple[Block, tuple[str, str]]] = {}
        for target in _targets(b):
            for hour in b.cron.hours:
                for minute in b.cron.minutes:
                    for a in buckets.setdefault((target, hour, minute), []):
                        candidates.setdefault(a.id, (a, target))
                    buckets[(target, hour, minute)].append(b)
        for a, (note, section) in candidates.values():
            if b.id not in reported and a.id != b.id and _share_a_minute(a, b):
                reported.add(b.id)
                problems.append(Problem(b.file, None, f"blocks.{b.id}",
                                        f"writes section {section!r} of {note} at the same minute as block {a.id!r}; "
                                        "move one block's cron or write another section."))
    return problems
