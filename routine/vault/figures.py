"""Figures in text, and whether a figure is supported by a text's figures (pure, no model).

A figure is supported by a text when it is one of the text's figures, in the same or another
unit (1.24 s for 1,240 ms, €12.4k for €12,400), rounded to the precision written (82% for
82.1%; with a word of approximation, "about €4,000" for €4,150, to its round digits), or derived
in one step a reader can check from figures on one topic: a difference or a sum of figures of
one unit, a ratio as a percentage (27 of 50 is 54%, or a change), what is left of a percentage
(46% to go), or a count of days or weeks between a date and today (or between two dates). The
operands of a derivation stand on the reply's own line or on a line of the text that shares a
word or a figure with it (and its neighbours in the same block): a derivation from figures that
have nothing to do with each other proves nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from itertools import combinations
from typing import Iterable
from routine.vault.provenance import is_checkbox_line

# A unit: its class (figures of one class can be compared) and its factor to the class's base.
_UNITS: dict[str, tuple[str, float]] = {
    "%": ("pct", 1), "percent": ("pct", 1),
    "€": ("money", 1), "$": ("money", 1), "£": ("money", 1), "eur": ("money", 1), "euro": ("money", 1),
    "euros": ("money", 1), "usd": ("money", 1), "dollars": ("money", 1),
    "ms": ("time", 0.001), "s": ("time", 1), "sec": ("time", 1), "secs": ("time", 1), "second": ("time", 1),
    "seconds": ("time", 1), "min": ("time", 60), "mins": ("time", 60), "minute": ("time", 60),
    "minutes": ("time", 60), "h": ("time", 3600), "hr": ("time", 3600), "hrs": ("time", 3600),
    "hour": ("time", 3600), "hours": ("time", 3600),
    "day": ("span", 1), "days": ("span", 1), "week": ("span", 7), "weeks": ("span", 7), "wk": ("span", 7),
    "wks": ("span", 7),
}
PLAIN = "plain"
_UNIT_WORDS = "|".join(sorted((u for u in _UNITS if u.isalpha()), key=len, reverse=True))
FIGURE = re.compile(
    r"(?<![\w.,])(?<![^\W\d_]-)(?P<cur>[€$£]\s?)?(?P<num>\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?P<dec>\.\d+)?(?!\.\d)"
    rf"(?P<k>\s?[kK]\b)?(?:\s?(?P<pct>%)|\s?(?:(?:GPU|CPU|A100|working|business|calendar|more|of)\s)?"
    rf"(?P<unit>{_UNIT_WORDS})\b)?", re.I)
_LABEL = re.compile(r"(?:\bKR|\bObjective|\bSample|\bPhase|\bStep|\bPart|\bNo\.|#)\s*$", re.I)
_APPROX = re.compile(r"(?:\babout|\baround|\broughly|\bnearly|\balmost|\bapprox(?:imately|\.)?|\bover|\bunder"
                     r"|\bmore than|\bless than|\bclose to|\bjust|\bsome|\bunder|\bbelow|\babove)\s*[€$£]?\s*$", re.I)
_BEFORE = 64  # characters before a figure that say it is approximate or a label (the words end right there)
_WORD = re.compile(r"[^\W\d_]\w{2,}")
_STOP = frozenset("""the and for are was has but not you our all out now new one two per its who how why can
    target current goal progress total above below already after before since until plan
    this that with from have will what when your than then them they their there these those
    about into over under more less just also only some such each very been were being which while where week
    days today done next last note notes still would could should
    january february march april june july august september october november december
    jan feb mar apr may jun jul aug sep sept oct nov dec
    monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun""".split())
_FORM_DIFF = re.compile(r"\b(?:more|left|to go|remain\w*|short|behind|ahead|gap|need|still|fewer|less|up|down"
                        r"|over|under|above|below|between|difference|vs\.?|versus|instead|cut|saved?|"
                        r"total|in all|combined|together|plus|sum|gained|lost|grew|dropped|better|worse|higher|lower"
                        r"|faster|slower|points?|times|each|per)\b|\+|×", re.I)


@dataclass(frozen=True)
class Figure:
    """A figure as written: its value in the unit written, decimals written, unit class and factor."""

    value: float
    places: int
    cls: str
    factor: float
    text: str
    approx: bool = False
    label: bool = False  # KR 1.2, Objective 3: a name, never an operand

    @property
    def base(self) -> float:
        return self.value * self.factor

    @property
    def year(self) -> bool:
        return self.cls == PLAIN and self.text.isdigit() and 1900 <= self.value <= 2100


def figures_of(line: str) -> list[Figure]:
    """The figures of one line of text (times of day and dates taken out by the caller)."""
    out = []
    for m in FIGURE.finditer(line):
        whole, dec = m["num"].replace(",", ""), m["dec"] or ""
        value = float(whole + dec) * (1000 if m["k"] else 1)
        places = max(0, len(dec) - 1) - (3 if m["k"] else 0)  # €12.4k: to the hundred
        unit = "€" if m["cur"] else "%" if m["pct"] else (m["unit"] or "").lower()
        cls, factor = _UNITS.get(unit, (PLAIN, 1.0))
        # The words just before it (both patterns end at it): a line of 10,000 figures is not 10,000 scans of itself.
        before = line[max(0, m.start() - _BEFORE):m.start()]
        approx = bool(_APPROX.search(before))
        out.append(Figure(value, places, cls, factor, m[0].strip(), approx, bool(_LABEL.search(before))))
    return out


def words_of(line: str) -> frozenset[str]:
    """The line's topic words, cut to their first five letters (labeled, labeling: label)."""
    return frozenset(w[:5] for w in (x.lower() for x in _WORD.findall(line)) if w not in _STOP)


@dataclass(frozen=True)
class Line:
    """One line of a text, as the support of a derivation: its words, figures and dates."""

    words: frozenset[str]
    figures: tuple[Figure, ...]
    dates: tuple[date, ...]
    block: int  # lines of one block (no blank line between) share it
    table: bool = False    # a row of a table
    heading: bool = False  # a heading (of the table below it, if one follows)


@dataclass
class Known:
    """A text's figures and lines, ready to support a reply's figures."""

    lines: list[Line]
    figures: list[Figure] = field(init=False)
    raw: set[float] = field(init=False)
    dates: set[date] = field(init=False)

    def __post_init__(self) -> None:
        self.figures = [f for line in self.lines for f in line.figures]
        self.raw = {round(f.value, 6) for f in self.figures}
        self.dates = {d for line in self.lines for d in line.dates}

    def related(self, words: frozenset[str], figures: Iterable[Figure]) -> list[Line]:
        """The lines on the reply line's topic (a shared word or figure), with their neighbours."""
        return [line for group in self.topics(words, figures) for line in group]

    def topics(self, words: frozenset[str], figures: Iterable[Figure], dates: Iterable[date] = ()) -> list[list[Line]]:
        """Each line on the reply line's topic (a shared word, figure or date): the figures one derivation
        may take together. A table is one topic: a hit in it (or in the heading above it) takes it all."""
        values, days = {round(f.value, 6) for f in figures}, set(dates)
        out = []
        for line in self.lines:
            if line.words & words or values & {round(f.value, 6) for f in line.figures} or days & set(line.dates):
                table = [other for other in self.lines if other.block == line.block and other.table]
                out.append(table if table and (line.table or line.heading) else [line])
        return out


def near(x: float, fig: Figure) -> bool:
    """Is ``x`` (in the figure's own unit) what the figure says, to the precision written?"""
    step = 10.0 ** -fig.places
    if fig.approx and fig.places <= 0 and fig.value >= 10:  # "about €4,000": to its round digits
        zeros = len(str(int(fig.value))) - len(str(int(fig.value)).rstrip("0"))
        return abs(x - fig.value) <= max(step, 10.0 ** zeros) / 2 + 1e-9
    return fig.value - step / 2 - 1e-9 <= x < fig.value + step - 1e-9


def same_class(a: Figure, b: Figure) -> bool:
    return a.cls == b.cls or PLAIN in (a.cls, b.cls)


def _in_unit(base: float, fig: Figure) -> float:
    return base / fig.factor


def direct(fig: Figure, known: Known) -> bool:
    """The figure is one of the known ones, in another unit or rounded."""
    if fig.cls in (PLAIN, "pct", "money") and round(fig.value, 6) in known.raw:
        return True
    for k in known.figures:
        if not same_class(fig, k) or (fig.cls in ("span", "time") and k.cls != fig.cls):
            continue  # "3 weeks", "48 hours": a duration, not any 3 or 48 of the notes
        if near(k.value, fig) or (k.cls == fig.cls and near(_in_unit(k.base, fig), fig)):
            return True
    return False


def derived(fig: Figure, operands: list[Figure], line: str) -> float | None:
    """The derivation from ``operands`` that gives ``fig``, if one does (its value), else None."""
    for value in candidates(fig, operands, line):
        if near(value, fig):
            return value
    return None


def operands_of(fig: Figure, figures: list[Figure]) -> bool:
    """Does a line with ``figures`` name two that ``fig`` could be worked out from (27 of 50, 54%)?"""
    if fig.cls == "span":
        return False  # days and weeks come from dates
    usable = [g for g in figures if not (g.year or g.label)]
    return any(a.cls == b.cls and (a.cls == fig.cls or PLAIN in (a.cls, fig.cls) or fig.cls == "pct" != a.cls)
               for a, b in combinations(usable, 2))


def candidates(fig: Figure, operands: list[Figure], line: str) -> list[float]:
    """What one step from pairs of ``operands`` gives, in the unit of ``fig``."""
    out: list[float] = []
    operands = [g for g in operands if not (g.year or g.label)]
    if fig.cls == "pct":
        for a, b in combinations(operands, 2):
            if not same_class(a, b) or not (a.base and b.base) or (a.cls == "pct") != (b.cls == "pct"):
                continue
            small, large = sorted((a.base, b.base))
            share = 100 * small / large  # 27 of 50: 54%, and 46% to go
            out += [share, 100 - share, 100 * large / small, 100 * (large - small) / small,
                    100 * (large - small) / large]
        out += [100 - p.value for p in operands if p.cls == "pct"]
        return out
    if fig.cls == PLAIN and not _FORM_DIFF.search(line):
        return out  # a plain count derived says how ("23 more", "in total")
    for a, b in combinations(operands, 2):
        if a.cls == b.cls == PLAIN != fig.cls != "span":  # the notes left the unit out: "used 1,820 of 2,500"
            out += [abs(a.value - b.value), a.value + b.value]
        elif a.cls == b.cls and fig.cls in (a.cls, PLAIN):
            out += [_in_unit(abs(a.base - b.base), fig), _in_unit(a.base + b.base, fig)]
        elif product := _product(fig, a, b):
            out.append(product)
    return out


def _product(fig: Figure, a: Figure, b: Figure) -> float | None:
    """120 seats at €29, 10 h at €14.50 an hour, 12 runs at 2.5 h, 2% of 9,450: in ``fig``'s unit."""
    by = {a.cls: a, b.cls: b}
    if len(by) < 2:
        return None
    if fig.cls == "money" and "money" in by:
        other = b if by["money"] is a else a
        return by["money"].value * other.value if other.cls in (PLAIN, "time") else None
    if fig.cls == "time" and {"time", PLAIN} == set(by):
        return _in_unit(by["time"].base * by[PLAIN].value, fig)
    if fig.cls == PLAIN and {"pct", PLAIN} == set(by):
        return by["pct"].value / 100 * by[PLAIN].value
    return None


def day_counts(fig: Figure, dates: Iterable[date], today: date, others: Iterable[date] = ()) -> list[float]:
    """Days (or weeks) from each of ``dates`` to today and to each of ``others``, in ``fig``'s unit."""
    if fig.cls != "span":
        return []
    spans = [abs((d - e).days) for d in set(dates) for e in {today, *others}]
    return [s / fig.factor for s in spans]


_PLAN_WORDS = re.compile(r"\b\d{1,2}:\d{2}\b|\b(?:block|slot|timebox|session|break)\b", re.I)


def significant(fig: Figure, strict: bool, line: str, kr_line: re.Pattern[str]) -> bool:
    """Is this figure a claim to check? Single digits are not (but for days and weeks); leniently,
    neither are durations on the lines of the day's plan ("- [ ] 09:00 call, 45 minutes")."""
    if fig.cls == "span":
        return True  # a count of days or weeks is a claim about a date, however small
    if len(re.sub(r"\D", "", fig.text)) < 2 and fig.value < 1000:
        return False
    on_plan = is_checkbox_line(line) or bool(_PLAN_WORDS.search(line))
    plan_duration = fig.cls == "time" and fig.factor >= 60 and on_plan
    return strict or not plan_duration or bool(kr_line.search(line))
