"""Printing for the CLI: JSON for `--json`, plain tables that fit the terminal otherwise, and the one
way a time is shown to the person (`Clock`: local, in routine's time zone)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from enum import Enum
from typing import TextIO
from zoneinfo import ZoneInfo

CELL_MAX = 60  # a cell's longest text when the terminal's width is unknown (piped, no COLUMNS)
GAP = "  "
FLOOR = 8  # a column cut to fit the terminal keeps at least this many characters
READABLE = 12  # a column cut below this leaves a `spare` column out instead


def print_json(data: object) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write("\n")


def terminal_width(stream: TextIO | None = None) -> int | None:
    """The width lines must fit: the terminal's, or COLUMNS; None when output goes to a file or pipe."""
    if os.environ.get("COLUMNS", "").isdigit() or (stream or sys.stdout).isatty():
        return shutil.get_terminal_size().columns
    return None


def fit(text: str, width: int) -> str:
    """One line cut to ``width`` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


class Kind(str, Enum):
    """What a column holds, which decides how it may be cut: an ID, a TIME or a NUMBER never is
    (a time is shortened to what differs from now instead); TEXT is cut, each cell kept distinct."""

    ID = "id"
    TIME = "time"
    NUMBER = "number"
    TEXT = "text"


class Moment(str):
    """A time as `Clock.show` wrote it, still knowing the moment, so a table can shorten it."""

    at: datetime

    def __new__(cls, text: str, at: datetime) -> Moment:
        made = super().__new__(cls, text)
        made.at = at
        return made


_ID_NAMES = frozenset({"id", "run", "proposal", "trigger", "chat"})
_RUN_ID = re.compile(r"^\d{8}-\d{6}(-[0-9a-f]+)?$|^[0-9a-f]{8,}$|^[a-z]+-\d+$")
_NUMBER = re.compile(r"^[-+]?\d[\d,]*(\.\d+)?\s?(%|s|ms|GiB|MiB|GB|MB|tok/s|k)?$")
_TIME = re.compile(r"^(?:[A-Z][a-z]{2} )?(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2})(?::\d{2})?(?: [A-Z+\-0-9]+)?$")


def _blank(value: object) -> bool:
    return value is None or str(value).strip() in ("", "-")


def kind_of(column: str, values: list[object]) -> Kind:
    """A column's kind inferred from its name and its values, for a table that does not declare it."""
    filled = [v for v in values if not _blank(v)]
    if filled and all(isinstance(v, Moment) or _TIME.match(str(v)) for v in filled):
        return Kind.TIME
    if filled and all(isinstance(v, (int, float)) or _NUMBER.match(str(v)) for v in filled):
        return Kind.NUMBER
    if column in _ID_NAMES or (filled and all(_RUN_ID.match(str(v)) for v in filled)):
        return Kind.ID
    return Kind.TEXT


def short_time(value: object, now: datetime | None = None) -> object:
    """A time shortened to what differs from now: `06:31` today, `Sat 06:31` within a week, the date
    beyond (`2026-11-02 06:31`). Anything else is given back as it is."""
    if isinstance(value, Moment):
        at = value.at
        now = (now or datetime.now(at.tzinfo)).astimezone(at.tzinfo) if at.tzinfo else (now or datetime.now())
    else:
        found = _TIME.match(str(value)) if value is not None else None
        if not found:
            return value
        at = datetime.fromisoformat(f"{found.group(1)} {found.group(2)}")
        now = (now or datetime.now()).replace(tzinfo=None)
    if at.date() == now.date():
        return at.strftime("%H:%M")
    if abs((at.date() - now.date()).days) < 7:
        return at.strftime("%a %H:%M")
    return at.strftime("%Y-%m-%d %H:%M")


def distinct_width(values: list[str], floor: int) -> int:
    """The narrowest width, from ``floor``, at which cutting keeps different cells different."""
    unique = sorted(set(values))
    longest = max((len(v) for v in unique), default=0)
    for width in range(min(floor, longest), longest + 1):
        if len({fit(v, width) for v in unique}) == len(unique):
            return width
    return longest


def say(text: str, stream: TextIO | None = None) -> None:
    """Prose for the person: on a terminal each line wraps at its width (words kept whole, the
    continuation indented like the line); piped, it is printed as it is."""
    out = stream or sys.stdout
    width = terminal_width(out)
    if width is None:
        print(text, file=out)
        return
    for line in text.split("\n"):
        indent = " " * (len(line) - len(line.lstrip()))
        print("\n".join(textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False,
                                      break_on_hyphens=False)) or "", file=out)


def print_table(rows: Sequence[Mapping[str, object]], columns: list[str], labels: dict[str, str] | None = None,
                keep: tuple[str, ...] = (), spare: tuple[str, ...] = (),
                kinds: dict[str, Kind] | None = None) -> None:
    """Rows as aligned columns. On a terminal columns with no values are left out and times are
    shortened to what differs from now (`06:31` today, `Sat 06:31` this week); a row fits the width,
    choosing what to cut by meaning: TEXT columns are cut (with `…`, each cut cell still distinct from
    the others in its column), then the ``spare`` columns and then the rightmost TEXT columns are
    left out, then the rightmost columns of any kind, whole. An ID (a ``keep`` column or the first,
    which names the row), a TIME or a NUMBER (declared in ``kinds`` or inferred from the values) is
    never cut, and a ``keep`` column never left out. The full text is in `--json` (and `runs show`)."""
    if not rows:
        return
    width = terminal_width()
    names = labels or {}
    grid: dict[str, list[object]] = {c: [r.get(c) for r in rows] for c in columns}
    kind = {c: (kinds or {}).get(c) or kind_of(c, grid[c]) for c in columns}
    for c in [columns[0], *keep]:  # a row's first cell names it (a block, an agent, a model): kept whole,
        if kind.get(c) is Kind.TEXT and c not in (kinds or {}):  # unless declared text (then cut, never left out)
            kind[c] = Kind.ID
    shown = list(columns)
    if width is not None:
        shown = [c for c in shown if not all(_blank(v) for v in grid[c])] or shown[:1]
        grid = {c: [short_time(v) for v in vs] if kind[c] is Kind.TIME else vs for c, vs in grid.items()}
    droppable = [c for c in spare if c in shown] + [c for c in reversed(shown) if kind[c] is Kind.TEXT
                                                    and c not in spare and c != shown[0] and c not in keep]
    droppable += [c for c in reversed(shown) if c not in droppable and c != shown[0] and c not in keep]
    widths = _widths(shown, grid, names, kind, width)
    for extra in droppable:  # left out in turn while the rest would not fit, or be cut too far
        if width is None or (_span(widths) <= width and (extra not in spare or _readable(shown, grid, names, widths))):
            break
        shown.remove(extra)
        widths = _widths(shown, grid, names, kind, width)
    heads = [names.get(c, c).upper() for c in shown]
    cells = [[_cell(grid[c][i]) for c in shown] for i in range(len(rows))]
    for line in [heads, *cells]:
        text = GAP.join(fit(cell, w).ljust(w) for cell, w in zip(line, widths)).rstrip()
        print(text if width is None else fit(text, width))


def _natural(column: str, grid: dict[str, list[object]], names: dict[str, str]) -> int:
    return max(len(names.get(column, column)), *(len(_cell(v)) for v in grid[column]))


def _floor(column: str, grid: dict[str, list[object]], names: dict[str, str], kind: dict[str, Kind]) -> int:
    if kind[column] is not Kind.TEXT:
        return _natural(column, grid, names)
    return min(_natural(column, grid, names), distinct_width([_cell(v) for v in grid[column]], FLOOR))


def _fits(shown: list[str], grid: dict[str, list[object]], names: dict[str, str], width: int) -> bool:
    return _span([_natural(c, grid, names) for c in shown]) <= width


def _readable(shown: list[str], grid: dict[str, list[object]], names: dict[str, str], widths: list[int]) -> bool:
    return all(w >= min(_natural(c, grid, names), READABLE) for c, w in zip(shown, widths))


def _widths(shown: list[str], grid: dict[str, list[object]], names: dict[str, str], kind: dict[str, Kind],
            width: int | None) -> list[int]:
    widths = [_natural(c, grid, names) for c in shown]
    _narrow(widths, [_floor(c, grid, names, kind) for c in shown], width)
    return widths


def _span(widths: list[int]) -> int:
    return sum(widths) + len(GAP) * (len(widths) - 1)


def _narrow(widths: list[int], floors: list[int], total: int | None) -> None:
    """Shrink the widest column that may shrink, a character at a time, until the row fits ``total``;
    without a terminal, cap each cell at ``CELL_MAX``."""
    if total is None:
        widths[:] = [min(w, max(CELL_MAX, f)) for w, f in zip(widths, floors)]
        return
    while _span(widths) > total:
        shrinkable = [i for i, (w, f) in enumerate(zip(widths, floors)) if w > f]
        if not shrinkable:
            return
        widths[max(shrinkable, key=lambda i: widths[i])] -= 1


def _cell(value: object) -> str:
    return "-" if value is None else " ".join(str(value).split("\n"))


@dataclass(frozen=True)
class Clock:
    """Routine's clock as the person reads it: every time shown in one zone (routine's `timezone:`,
    else the machine's). `--json` keeps the journal's ISO 8601 with its offset instead."""

    zone: tzinfo

    @classmethod
    def named(cls, name: str) -> Clock:
        return cls(ZoneInfo(name))

    def local(self, at: datetime | str) -> datetime:
        moment = datetime.fromisoformat(at.replace("Z", "+00:00")) if isinstance(at, str) else at
        return moment.astimezone(self.zone)

    def show(self, at: datetime | str | None, form: str = "%Y-%m-%d %H:%M:%S") -> str:
        """A moment as local time (`-` for none; text that is not a time is given back as it is)."""
        if not at:
            return "-"
        try:
            moment = self.local(at)
        except ValueError:
            return str(at)
        return Moment(moment.strftime(form), moment)

    @property
    def abbreviation(self) -> str:
        """The zone as a heading names it: `CET`, `+0530`."""
        return datetime.now(self.zone).tzname() or str(self.zone)

    def label(self, column: str) -> str:
        """A time column's heading with its zone, for a table that has no other context."""
        return f"{column} ({self.abbreviation})"
