"""Printing for the CLI: JSON for `--json`, plain tables that fit the terminal otherwise, and the one
way a time is shown to the person (`Clock`: local, in routine's time zone)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo

CELL_MAX = 60  # a cell's longest text when the terminal's width is unknown (piped, no COLUMNS)
GAP = "  "
FLOOR = 8  # a column cut to fit the terminal keeps at least this many characters
READABLE = 12  # a column cut below this leaves a `spare` column out instead


def print_json(data: object) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write("\n")


def terminal_width() -> int | None:
    """The width lines must fit: the terminal's, or COLUMNS; None when output goes to a file or pipe."""
    if os.environ.get("COLUMNS", "").isdigit() or sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def fit(text: str, width: int) -> str:
    """One line cut to ``width`` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def print_table(rows: list[dict], columns: list[str], labels: dict[str, str] | None = None,
                keep: tuple[str, ...] = (), spare: tuple[str, ...] = ()) -> None:
    """Rows as aligned columns. On a terminal a row fits its width: the widest columns are cut
    (with `…`), never a ``keep`` column (an id) below its full text, and the ``spare`` columns are
    left out in turn while a column would be cut below ``READABLE``. The full text is in `--json`
    (and `runs show`)."""
    if not rows:
        return
    width = terminal_width()
    shown = list(columns)
    natural = {c: max(len((labels or {}).get(c, c)), *(len(_cell(r.get(c))) for r in rows)) for c in columns}
    floors = {c: natural[c] if c in keep else min(natural[c], FLOOR) for c in columns}
    widths = _fitted(shown, natural, floors, width)
    for extra in spare:  # left out in turn while a column would be cut below what reads well
        if width is None or all(w >= min(natural[c], READABLE) for c, w in zip(shown, widths)):
            break
        shown.remove(extra)
        widths = _fitted(shown, natural, floors, width)
    heads = [(labels or {}).get(c, c).upper() for c in shown]
    for line in [heads, *([_cell(r.get(c)) for c in shown] for r in rows)]:
        text = GAP.join(fit(cell, w).ljust(w) for cell, w in zip(line, widths)).rstrip()
        print(text if width is None else fit(text, width))


def _fitted(shown: list[str], natural: dict[str, int], floors: dict[str, int], width: int | None) -> list[int]:
    widths = [natural[c] for c in shown]
    _narrow(widths, [floors[c] for c in shown], width)
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
            return self.local(at).strftime(form)
        except ValueError:
            return str(at)

    @property
    def abbreviation(self) -> str:
        """The zone as a heading names it: `CET`, `+0530`."""
        return datetime.now(self.zone).tzname() or str(self.zone)

    def label(self, column: str) -> str:
        """A time column's heading with its zone, for a table that has no other context."""
        return f"{column} ({self.abbreviation})"
