"""Two blocks writing the same section of the same note at the same minute would race."""

from __future__ import annotations

from datetime import date, timedelta

from routine.errors import Problem
from routine.schedule.model import Block


def _targets(block: Block) -> set[tuple[str, str]]:
    return {(s.write.note, s.write.section) for s in block.steps if s.write and s.write.section}


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
    problems = []
    for i, a in enumerate(blocks):
        for b in blocks[i + 1:]:
            shared = _targets(a) & _targets(b)
            if shared and _share_a_minute(a, b):
                note, section = sorted(shared)[0]
                problems.append(Problem(b.file, None, f"blocks.{b.id}",
                                        f"writes section {section!r} of {note} at the same minute as block {a.id!r}; "
                                        "move one block's cron or write another section."))
    return problems
