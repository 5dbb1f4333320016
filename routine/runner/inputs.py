"""The forms a step's `inputs:` entry can take, rendered and expanded.

- ``"Plans/OKRs.md"``: a note; ``"Daily/{{ yesterday }}.md#Evening Log"``: one section of it.
- ``"Daily/*.md"``: the notes a glob matches, newest first (dated notes by their date, none
  dated after today).
- ``"Daily/{{ week_so_far }}.md#Digest"``: a list variable makes one input per date, in date
  order (``week_so_far``: this ISO week's days before today; ``last_week``: the seven days of
  the week before).
- ``"links: Daily/{{ today }}.md#Plan"``: the notes that note (or section) links to.
- ``"journal: 7d"``: routine's own journal of the last 7 days, as a report (the Watcher's view).
- ``"calendar: today"`` (``tomorrow``, ``this_week``): the events of the person's calendars
  (``calendars:`` in routine.yaml, ``routine.person.agenda``) in local time.
- ``"{{ steps.planner.output }}"``: an earlier step's output.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Callable

from routine.config.calendars import Span
from routine.config.input_forms import STEP_REF, Kind, days, kind_of, problem
from routine.errors import UsageError
from routine.templating import LIST_VARIABLES, Variables, render
from routine.vault import glob_match, in_scope
from routine.vault.files import vault_files

if TYPE_CHECKING:
    from routine.memory.retrieve import HitRecord

_LIST_VAR = re.compile(r"\{\{\s*(" + "|".join(sorted(LIST_VARIABLES)) + r")\s*\}\}")
_DATED = re.compile(r"(\d{4}-\d{2}-\d{2})")


Progress = Callable[[str, int, int], None]  # what is being indexed, done, total


@dataclass(frozen=True)
class RunServices:
    """What a run reads besides the vault, one set made by the runner (``Runner.services``) for a
    step and a conversation alike, so chat gets every input form a run gets: the journal's
    report (`journal: 7d`), the person's calendars on the run's own day (`calendar: today`), the
    tools' search and the index's progress while a search waits for it."""

    journal_report: Callable[[int], str] | None = None
    follow_through: Callable[[int], str] | None = None  # planned vs done in the daily Plans (`follow-through: 7d`)
    calendar_report: Callable[[Span], str] | None = None
    search: Callable[[str, int, list[str]], list[HitRecord]] | None = None
    indexing: Progress | None = None


NO_SERVICES = RunServices()


@dataclass(frozen=True)
class Input:
    kind: Kind
    path: str = ""
    section: str | None = None
    name: str = ""        # a step's agent
    text: str = ""        # a step's output
    days: int = 0         # journal, follow-through
    today: str = ""       # for globs: dated notes after today are left out
    span: Span = Span.TODAY  # calendar


def _dates(variables: Variables, name: str) -> list[str]:
    """A date list (``LIST_VARIABLES``) as ``templating.date_vars`` gives it: a list of ISO dates."""
    value = variables.get(name, [])
    return [day for day in value if isinstance(day, str)] if isinstance(value, list) else []


def expand(raw: str, variables: Variables, where: str) -> list[Input]:
    """One entry of `inputs:` as the inputs it stands for, rendered."""
    lists = _LIST_VAR.findall(raw)
    if lists:
        name = lists[0]
        return [form for day in _dates(variables, name)
                for form in expand(_LIST_VAR.sub(day, raw, count=1), variables, where)]
    step = STEP_REF.search(raw)
    text = render(raw, variables, where)
    if step:
        return [Input(Kind.STEP, name=step[1], text=text)]
    kind, words = kind_of(text)
    wrong = problem(text, where)
    if wrong is not None:
        raise UsageError(*wrong)
    if kind in (Kind.JOURNAL, Kind.FOLLOW_THROUGH):
        return [Input(kind, days=days(words) or 0)]
    if kind is Kind.CALENDAR:
        return [Input(kind, span=Span(words))]
    path, _, section = words.partition("#")
    if kind is Kind.GLOB:
        return [Input(kind, path=path, today=str(variables.get("today", "")))]
    return [Input(kind, path=path.strip(), section=section.strip() or None)]


def _journal(services: RunServices, form: Input) -> tuple[str, str]:
    report = services.journal_report
    return f"routine's own journal, the last {form.days} days", report(form.days) if report else ""


def _follow_through(services: RunServices, form: Input) -> tuple[str, str]:
    report = services.follow_through
    return f"the person's follow-through, the last {form.days} days", report(form.days) if report else ""


def _calendar(services: RunServices, form: Input) -> tuple[str, str]:
    report = services.calendar_report  # without `calendars:` configured it has nothing to say
    return f"the person's calendar, {form.span.value.replace('_', ' ')}", report(form.span) if report else ""


# The forms read from a run service as one text: (what the model is told it is, the text; "": nothing
# to give, as in a dry run without state). ``routine.runner.context`` gathers each of them alike.
REPORTS: dict[Kind, Callable[[RunServices, Input], tuple[str, str]]] = {
    Kind.JOURNAL: _journal, Kind.FOLLOW_THROUGH: _follow_through, Kind.CALENDAR: _calendar}


def glob_notes(vault: Path, pattern: str, reads: list[str], today: str) -> list[str]:
    """Notes matching a glob that the agent may read, newest first: dated notes (a date in the
    name) by that date, none after today; others by modification time, after the dated ones."""
    dated, undated = [], []
    # The one safe walk: names that are not UTF-8, loops, pipes are skipped (and logged) there.
    for rel in vault_files(vault):
        if not rel.endswith(".md") or not glob_match(pattern, rel) or not in_scope(reads, rel):
            continue
        match = _DATED.search(PurePosixPath(rel).stem)
        if match and _is_date(match[1]):
            if not today or match[1] <= today:
                dated.append((match[1], rel))
            continue
        try:
            undated.append((os.stat(vault / rel).st_mtime, rel))
        except OSError:  # gone, or turned into a loop, since the walk
            continue
    return [rel for _, rel in sorted(dated, reverse=True)] + [rel for _, rel in sorted(undated, reverse=True)]


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True
