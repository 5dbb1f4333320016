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

import math
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
    "/s": ("rate", 1), "/min": ("rate", 1 / 60), "/h": ("rate", 1 / 3600),
}
_RATE = {"s": "/s", "sec": "/s", "second": "/s", "min": "/min", "minute": "/min", "h": "/h", "hour": "/h"}
PLAIN = "plain"
_UNIT_WORDS = "|".join(sorted((u for u in _UNITS if u.isalpha()), key=len, reverse=True))
FIGURE = re.compile(
    r"(?<![\w.,])(?<![^\W\d_]-)(?P<cur>[€$£]\s?)?(?P<num>\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?P<dec>\.\d+)?(?!\.\d)"
    r"(?P<k>\s?(?:[kK]|thousand|million|[mb]n)\b)?"
    # a rate: 20/s, 20 req/s, 20 requests per second, 20 a second, 20 rps
    r"(?:\s?(?:[a-z]+\s?)?(?:/\s?|\bper\s+|\ban?\s+)(?P<per>s|sec|second|min|minute|h|hour)\b"
    r"|\s?(?P<rps>rps|qps)\b"
    rf"|\s?(?P<pct>%)|\s?(?:(?:GPU|CPU|A100|working|business|calendar|more|of)\s)?"
    rf"(?P<unit>{_UNIT_WORDS})\b)?", re.I)
_LABEL = re.compile(r"(?:\bKR|\bObjective|\bSample|\bPhase|\bStep|\bPart|\bNo\.|#|\bweek|\bwk|\bKW|\bCW"
                    r"|\bsprint|\bissue|\bPR|\bID|\bversion|\bv|\bticket\s+#?|\bround|\bQ)\s*$", re.I)
_MULTIPLIER = {"k": 1000, "thousand": 1000, "million": 1_000_000, "mn": 1_000_000, "bn": 1_000_000_000}
_SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_NUMBER_WORD = "|".join([*_TENS, *_SMALL[::-1], "a", "an"])
# A number in words: "forty", "twenty-five", "a dozen", "two hundred", "a thousand", "per thousand pages"
SPELLED = re.compile(
    rf"(?<![\w.,-])(?<!\d )(?:(?P<n>{_NUMBER_WORD})(?:-(?P<n2>{'|'.join(_SMALL[1:10])}))?\s+)?"
    r"(?P<m>dozen|hundred|thousand|million)\b|"
    rf"(?<![\w-])(?P<w>{'|'.join(_TENS)})(?:-(?P<w2>{'|'.join(_SMALL[1:10])}))?(?![\w-])"
    rf"|(?<![\w-])(?P<teen>{'|'.join(_SMALL[10:])})(?![\w-])", re.I)
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
    label: bool = False  # KR 1.2, Objective 3, week 47, #123: a name, never an operand nor a figure to match
    spelled: bool = False  # written in words ("forty", "a dozen")

    @property
    def base(self) -> float:
        return self.value * self.factor

    @property
    def year(self) -> bool:
        return self.cls == PLAIN and self.text.isdigit() and 1900 <= self.value <= 2100


def figures_of(line: str) -> list[Figure]:
    """The figures of one line of text (times of day and dates taken out by the caller)."""
    out: list[tuple[int, Figure]] = []
    for m in FIGURE.finditer(line):
        whole, dec = m["num"].replace(",", ""), m["dec"] or ""
        times = _MULTIPLIER[m["k"].strip().lower()] if m["k"] else 1
        value = float(whole + dec) * times
        places = max(0, len(dec) - 1) - (len(str(times)) - 1)  # €12.4k: to the hundred
        unit = "€" if m["cur"] else "%" if m["pct"] else (m["unit"] or "").lower()
        if (m["per"] or m["rps"]) and not m["cur"]:  # (€14.50 an hour: an amount)
            unit = _RATE[(m["per"] or "s").lower()]
        cls, factor = _UNITS.get(unit, (PLAIN, 1.0))
        # The words just before it (both patterns end at it): a line of 10,000 figures is not 10,000 scans of itself.
        before = line[max(0, m.start() - _BEFORE):m.start()]
        end = m.end() if cls != "money" else max(m.end(g) for g in ("num", "dec", "k") if m[g])  # not "an hour"
        out.append((m.start(), Figure(value, places, cls, factor, line[m.start():end].strip(),
                                      bool(_APPROX.search(before)), bool(_LABEL.search(before)))))
    return [f for _, f in sorted(out + _spelled(line), key=lambda found: found[0])]


def _spelled(line: str) -> list[tuple[int, Figure]]:
    """The numbers of ten and more written in words ("forty minutes", "a dozen", "per thousand pages"),
    each with where it stands."""
    out: list[tuple[int, Figure]] = []
    for m in SPELLED.finditer(line):
        if m["m"]:
            n = (m["n"] or "a").lower()
            base = 1 if n in ("a", "an") else _TENS.get(n) or _SMALL.index(n)
            base += _SMALL.index(m["n2"].lower()) if m["n2"] else 0
            value = base * {"dozen": 12, "hundred": 100, "thousand": 1000, "million": 1_000_000}[m["m"].lower()]
        elif m["w"]:
            value = _TENS[m["w"].lower()] + (_SMALL.index(m["w2"].lower()) if m["w2"] else 0)
        else:
            value = _SMALL.index(m["teen"].lower())
        rest = line[m.end():m.end() + _BEFORE]
        unit = re.match(rf"\s(?:(?:more|of)\s)?({_UNIT_WORDS})\b", rest, re.I)
        cls, factor = _UNITS.get(unit[1].lower() if unit else "", (PLAIN, 1.0))
        text = m[0].strip() + (unit[0] if unit else "")
        before = line[max(0, m.start() - _BEFORE):m.start()]
        approx = m["m"] is not None and m["m"].lower() == "dozen" or bool(_APPROX.search(before))
        out.append((m.start(), Figure(float(value), 0, cls, factor, text, approx, bool(_LABEL.search(before)),
                                      spelled=True)))
    return out


_KR_NAME = re.compile(r"\bKR\s*(\d+(?:\.\d+)?)", re.I)
_UNIT_OR_K = re.compile(rf"\d+(?:[kK]|{_UNIT_WORDS}|st|nd|rd|th|x|am|pm|mn|bn)", re.I)
_MIXED = re.compile(r"(?<![\w.,])\d+[^\W\d_]\w*")  # 7B, 2FA, 3D: a name


def words_of(line: str) -> frozenset[str]:
    """The line's topic words, cut to their first five letters (labeled, labeling: label), and the
    key results it names (kr1.2)."""
    words = {w[:5] for w in (x.lower() for x in _WORD.findall(line)) if w not in _STOP}
    mixed = {w.lower() for w in _MIXED.findall(line) if not _UNIT_OR_K.fullmatch(w)}
    return frozenset(words | mixed | {f"kr{n}" for n in _KR_NAME.findall(line)})


@dataclass(frozen=True)
class Line:
    """One line of a text, as the support of a derivation: its words, figures and dates."""

    words: frozenset[str]
    figures: tuple[Figure, ...]
    dates: tuple[date, ...]
    block: int  # lines of one block (no blank line between) share it
    table: bool = False    # a row of a table
    heading: bool = False  # a heading (of the table below it, if one follows)
    context: frozenset[str] = frozenset()  # the words of its heading, and of its table's header row


@dataclass
class Known:
    """A text's figures and lines, ready to support a reply's figures."""

    lines: list[Line]
    figures: list[Figure] = field(init=False)
    raw: set[float] = field(init=False)
    dates: set[date] = field(init=False)
    labels: set[float] = field(init=False)  # the numbers of KR 1.2, Objective 3, week 47
    _by_word: dict[str, list[int]] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.figures = [f for line in self.lines for f in line.figures if not (f.label or f.year)]
        self.raw = {round(f.value, 6) for f in self.figures if f.cls != "pct"}
        self.dates = {d for line in self.lines for d in line.dates}
        self.labels = {round(f.value, 6) for line in self.lines for f in line.figures if f.label}

    def about(self, words: frozenset[str] | None) -> Known:
        """The lines about the subject ``words`` (a word in common with the line, its heading or its
        table's header): where a figure of a claim on that subject is supported. None: every line."""
        if words is None:
            return self
        if self._by_word is None:
            self._by_word = {}
            for i, line in enumerate(self.lines):
                for word in line.words | line.context:
                    self._by_word.setdefault(word, []).append(i)
        found = sorted({i for word in words for i in self._by_word.get(word, ())})
        return Known([self.lines[i] for i in found])

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


def magnitude_keys(values: Iterable[float]) -> set[str]:
    """Keys a figure of these values is found by, whatever its unit or rounding (m:12 for 1.24 s and
    1,240 ms: the first two significant digits)."""
    out = set()
    for x in values:
        if x > 0:
            out.add(f"m:{int(x / 10 ** math.floor(math.log10(x)) * 10 + 1e-9)}")
    return out


def keys_for(fig: Figure) -> set[str]:
    """The keys (``magnitude_keys``) of what supports ``fig`` directly: every value ``near`` takes for it."""
    step = 10.0 ** -fig.places
    tolerance = step
    if fig.approx and fig.places <= 0 and fig.value >= 10:
        zeros = len(str(int(fig.value))) - len(str(int(fig.value)).rstrip("0"))
        tolerance = max(step, 10.0 ** zeros)
    values = [fig.value + tolerance * (i / 20 - 1) for i in range(41)]
    return magnitude_keys([*values, *(v * fig.factor for v in values)])


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
    if fig.cls in (PLAIN, "money") and round(fig.value, 6) in known.raw:
        return True
    for k in known.figures:
        if not same_class(fig, k) or (fig.cls in ("span", "time", "rate", "pct") and k.cls != fig.cls):
            continue  # "3 weeks", "48 hours", "50 per second", "47%": not any 3, 48, 50 or 47 of the notes
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
        if a.cls == b.cls == PLAIN != fig.cls and fig.cls not in ("span", "rate"):  # "used 1,820 of 2,500"
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
