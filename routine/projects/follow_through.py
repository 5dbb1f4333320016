"""Follow-through, counted: what the day's Plan set out and what the person ticked.

The Planner writes each day's time blocks as checkbox lines in the `Plan` section of the daily
note; the person ticks them. Per day: blocks planned and done. Across the days: items carried
over (an unfinished block planned again on a later day, matched by its words), how old the ones
still open are, and which kinds of task slip (a kind: the task's first word, its verb, as the
Planner is asked to start each one). Pure over the notes' text, but for ``read_days``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from routine.projects.tasks import TaskState, parse_line
from routine.vault.keep import section_now

PLAN_SECTION = "Plan"
OLD_AFTER_DAYS = 3  # a carry-over older than this is named in the summary
_TIME = re.compile(r"^\s*\d{1,2}[:.]\d{2}\s*(?:[–—-]+\s*\d{1,2}[:.]\d{2})?\s*")
_LINK = re.compile(r"\[\[([^\]|#]*)[^\]]*\]\]")
_WORD = re.compile(r"[^\W\d_]{3,}")
_SAME = 0.6  # share of words two days' lines have in common to be one carried item


@dataclass(frozen=True)
class PlanItem:
    text: str  # the task without its time, checkbox or link
    done: bool
    dropped: bool  # cancelled (`- [-]`): neither done nor slipping

    @property
    def kind(self) -> str:
        words = self.text.split()
        return words[0].lower().strip(".,:;") if words else ""

    def words(self) -> frozenset[str]:
        return frozenset(w.lower() for w in _WORD.findall(self.text))


@dataclass(frozen=True)
class Day:
    day: date
    items: tuple[PlanItem, ...]

    @property
    def planned(self) -> int:
        return sum(1 for i in self.items if not i.dropped)

    @property
    def done(self) -> int:
        return sum(1 for i in self.items if i.done)


@dataclass(frozen=True)
class Carry:
    text: str
    first: date  # the first day it was planned
    last: date  # the last day it was planned
    done: bool  # finished in the end

    def age(self, today: date) -> int:
        return (today - self.first).days


@dataclass(frozen=True)
class FollowThrough:
    days: tuple[Day, ...]
    carried: tuple[Carry, ...]
    today: date

    @property
    def planned(self) -> int:
        return sum(d.planned for d in self.days)

    @property
    def done(self) -> int:
        return sum(d.done for d in self.days)

    def open_carries(self, older_than: int = OLD_AFTER_DAYS) -> list[Carry]:
        return [c for c in self.carried if not c.done and c.age(self.today) > older_than]

    def slipping(self) -> list[tuple[str, int, int]]:
        """Kinds of task by how often they were left undone: (kind, undone, planned), worst first."""
        planned = Counter(i.kind for d in self.days for i in d.items if not i.dropped)
        undone = Counter(i.kind for d in self.days for i in d.items if not i.dropped and not i.done)
        return sorted(((k, undone[k], planned[k]) for k in undone), key=lambda r: (-r[1], -r[1] / r[2], r[0]))

    def summary(self) -> str:
        """A short paragraph for Team Health and the Planner's context."""
        if not self.planned:
            return f"**Follow-through**: no planned blocks in the {len(self.days)} days' Plans."
        per_day = ", ".join(f"{d.day:%a} {d.done}/{d.planned}" for d in self.days if d.planned)
        lines = [f"**Follow-through**: {self.done} of {self.planned} planned blocks done "
                 f"({round(100 * self.done / self.planned)}%) — {per_day}."]
        old = self.open_carries()
        if old:
            lines.append(f"Carry-overs older than {OLD_AFTER_DAYS} days: "
                         + "; ".join(f"{c.text} ({c.age(self.today)} days, since {c.first:%a %d %b})" for c in old)
                         + ".")
        slip = [f"{kind} {undone} of {planned}" for kind, undone, planned in self.slipping()[:3] if undone > 1]
        if slip:
            lines.append("Kinds that slip (not done of planned): " + ", ".join(slip) + ".")
        return "\n".join(lines)


def plan_items(section: str) -> tuple[PlanItem, ...]:
    """The checkbox lines of a Plan section, each as a task without its time and link."""
    items = []
    for i, line in enumerate(section.splitlines()):
        task = parse_line("", i, line)
        if task is None:
            continue
        text = _TIME.sub("", _LINK.sub(lambda m: m.group(1), task.text))
        text = text.split(" — ")[0].strip(" -–—")
        if text:
            items.append(PlanItem(text, task.state is TaskState.DONE, task.state is TaskState.CANCELLED))
    return tuple(items)


def follow_through(days: list[Day], today: date) -> FollowThrough:
    """The days' figures, and the items carried from one day's plan to a later one."""
    carries: list[tuple[PlanItem, date, date, bool]] = []  # (first wording, first, last, done)
    for day in days:
        for item in day.items:
            if item.dropped:
                continue
            at = next((n for n, c in enumerate(carries) if not c[3] and c[2] < day.day and _same(c[0], item)), None)
            if at is None:
                carries.append((item, day.day, day.day, item.done))
            else:
                first_item, first, _, _ = carries[at]
                carries[at] = (first_item, first, day.day, item.done)
    carried = tuple(Carry(i.text, first, last, done) for i, first, last, done in carries if last > first)
    return FollowThrough(tuple(days), carried, today)


def _same(a: PlanItem, b: PlanItem) -> bool:
    wa, wb = a.words(), b.words()
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= _SAME


def read_days(vault: Path, daily_folder: str, today: date, count: int) -> list[Day]:
    """The Plans of the ``count`` days up to today (a day without a note or Plan is left out)."""
    out = []
    for back in range(count - 1, -1, -1):
        day = today - timedelta(days=back)
        text = section_now(vault, f"{daily_folder}/{day.isoformat()}.md", PLAN_SECTION)
        if text:
            out.append(Day(day, plan_items(text)))
    return out
