"""Is every claim of a reply grounded in the notes? Deterministic, no model.

A claim is supported when a reader could check it in the notes:

- a wikilink names a note the model was shown (a link or label in its context) or a note the
  agent may read;
- a date is in what the model was shown (or is today, yesterday or tomorrow), with or without
  its year, and the weekday written beside it is that date's;
- a figure (two digits or more, a percentage, an amount) is in what the model was shown, in
  another unit or rounded to the precision written, or derived from those in one checkable step
  (``routine/vault/figures.py``: a difference, a sum, a percentage, what is left, days until a
  date), or is marked as the model's own estimate ("~", "≈", "estimate");
- a person or project named as one (``routine/vault/mentions.py``: "ask Priya", "Sarah
  confirmed", "project Atlas") is named in what the model was shown, or has a note in People/
  or Projects/.

What the model was not shown but the agent may read counts too: a note that states the claim
(looked up only for a claim the shown text does not support) is named as its source.

Strictness (the agent note's ``grounding_check``): ``strict`` checks every figure, ``lenient``
leaves out durations of the day's plan (45 minutes) outside lines about key results; links,
dates and names are checked by both; ``off`` checks nothing. Times of day (09:00), single digits
and list numbers are wording, not claims.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import date, timedelta
from enum import Enum
from functools import partial
from pathlib import PurePosixPath
from typing import Callable, Iterable

from routine.vault.figures import (
    PLAIN,
    Figure,
    Known,
    candidates,
    day_counts,
    derived,
    direct,
    figures_of,
    keys_for,
    near,
    operands_of,
    significant,
    words_of,
)
from routine.vault.grounds import Facts, Grounds, grounds_for
from routine.vault.mentions import (
    WEEKDAYS,
    Named,
    NameKind,
    Written,
    dates_in,
    known_dates,
    name_pairs,
    names_in,
    without_dates,
)
from routine.vault.notes import code_fence_ranges, wikilinks

__all__ = ["Facts", "Finding", "Grounds", "Kind", "Review", "Strictness", "check", "findings_text", "grounds_for",
           "review", "sentences"]


class Strictness(str, Enum):
    STRICT = "strict"
    LENIENT = "lenient"
    OFF = "off"


class Kind(str, Enum):
    """What an unsupported claim is."""

    LINK = "link"
    FIGURE = "figure"
    DERIVED = "derived"   # a figure a step of arithmetic would give, but not this one
    DATE = "date"
    PERSON = "person"
    PROJECT = "project"


@dataclass(frozen=True)
class Finding:
    """One claim of a reply that nothing the model was given supports, and where to look."""

    kind: str
    claim: str
    why: str
    hint: str = ""   # where support could be found

    def line(self) -> str:
        return f"{self.claim}: {self.why}" + (f" ({self.hint})" if self.hint else "")


@dataclass
class Review:
    """The check of one reply: its unsupported claims, and the notes that supported a claim the
    model was not shown (claim → path)."""

    findings: list[Finding]
    found_in: dict[str, str]


def check(reply: str, grounds: Grounds, strictness: Strictness | str = Strictness.LENIENT) -> list[Finding]:
    """The unsupported claims of ``reply``, each once, in the order they appear."""
    return review(reply, grounds, strictness).findings


def review(reply: str, grounds: Grounds, strictness: Strictness | str = Strictness.LENIENT) -> Review:
    strictness = Strictness(strictness)
    result = Review([], {})
    if strictness is Strictness.OFF:
        return result
    _links(reply, grounds, result)
    prose = _prose(reply)
    _dates(prose, grounds, result)
    _figures(prose, grounds, strictness, result)
    _names(prose, grounds, result)
    unique: dict[tuple[str, str], Finding] = {}
    for f in result.findings:
        unique.setdefault((f.kind, f.claim), f)
    result.findings = list(unique.values())
    return result


def findings_text(findings: list[Finding]) -> str:
    return "\n".join(f"- {f.line()}" for f in findings)


def _lookup(grounds: Grounds, test: Callable[[Facts], bool], keys: set[str] | None = None,
            need: set[str] | None = None) -> str | None:
    """The first note the agent may read (not shown) whose facts pass ``test`` (``keys``, ``need``:
    what any such note has, ``Grounds.find``)."""
    return grounds.find(test, keys, need)


def _sharing(words: frozenset[str], values: Iterable[float] = (), dates: Iterable[date] = ()) -> set[str]:
    """A note shares a word, a figure or a date with a claim's line (else it supports none of it)."""
    return {f"w:{w}" for w in words} | {f"v:{round(v, 6)}" for v in values} | {f"d:{d.month}-{d.day}" for d in dates}


# --- each kind of claim ---------------------------------------------------------------------

def _links(reply: str, grounds: Grounds, result: Review) -> None:
    shown_links = {t.lower() for t in wikilinks(grounds.shown)}
    for target in wikilinks(reply):
        if target.lower() in shown_links or grounds.readable(target):
            continue
        name = PurePosixPath(target).name
        close = difflib.get_close_matches(name.lower(), sorted(grounds.all_names(name)), 3, 0.6)
        hint = "notes of a like name: " + ", ".join(f"[[{c}]]" for c in close) if close else ""
        result.findings.append(Finding(Kind.LINK.value, f"[[{target}]]",
                                       "no such note among those you were given or may read", hint))


def _date_ok(written: Written, facts: Facts, today: date) -> date | None:
    """The date of ``facts`` (or today ±1) that ``written`` names, or None."""
    known = facts.dates | {today + timedelta(days=n) for n in (-1, 0, 1)}
    if written.year:
        on = written.on(written.year)
        return on if on in known else None
    return next((d for d in sorted(known, key=lambda d: abs((d - today).days))
                 if (d.month, d.day) == (written.month, written.day)), None)


def _topical(facts: Facts, sentence: str, line: str = "") -> Facts:
    """``facts`` cut to the lines on the sentence's topic (a word or a figure in common), else on its
    line's; all of them when neither names a topic."""
    words, figures = words_of(sentence), figures_of(without_dates(sentence))
    if not words and not figures:
        return facts  # "Friday 20 November.": a date on its own, as a heading gives it
    lines = facts.known.related(words, figures) or facts.known.related(words_of(line), [])
    return Facts(Known(lines), frozenset(d for x in lines for d in x.dates), frozenset(), frozenset(), "")


def _date_in(written: Written, sentence: str, line: str, today: date, facts: Facts) -> bool:
    """A note states the date on a line of the sentence's topic."""
    return _date_ok(written, _topical(facts, sentence, line), today) is not None


def _dates(prose: str, grounds: Grounds, result: Review) -> None:
    for line in prose.splitlines():
        for sentence in sentences(line):
            for written in dates_in(sentence):
                finding = _date(written, sentence, line, grounds, result)
                if finding is not None:
                    result.findings.append(finding)


_ROUGHLY = re.compile(r"(?:~|≈|\baround|\babout|\broughly|\bapproximately)\s*(?:on\s+|by\s+)?$", re.I)


def _date(written: Written, sentence: str, line: str, grounds: Grounds, result: Review) -> Finding | None:
    """The finding about one date of a reply (None: supported), a note it was found in noted."""
    if written.year and written.on(written.year) is None:
        return Finding(Kind.DATE.value, written.text, "not a date of the calendar")
    if _ESTIMATE.search(line) and _ROUGHLY.search(sentence[:sentence.find(written.text)]):
        return None  # "~3 more days, so around Dec 12": the model's own estimate, marked as one
    on = _date_ok(written, grounds.facts, grounds.today)  # anywhere in what the model was shown
    if on is None:  # else on a line of its topic in a note the agent may read
        source = _lookup(grounds, partial(_date_in, written, sentence, line, grounds.today),
                         {f"d:{written.month}-{written.day}"})
        facts = grounds.note_facts(source) if source is not None else None
        if source is not None and facts is not None:
            result.found_in[written.text] = source
            on = _date_ok(written, facts, grounds.today)
    if on is None:
        return Finding(Kind.DATE.value, written.text, "this date is not in the notes you were given",
                       _nearest_line(sentence, grounds.facts, want="date"))
    if written.weekday is not None and on.weekday() != written.weekday:
        return Finding(Kind.DATE.value, written.text, f"{on:%d %B %Y} is a {WEEKDAYS[on.weekday()].title()}")
    return None


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-Þ*(\[])|(?<=;)\s+")


def sentences(line: str) -> list[str]:
    return [s for s in _SENTENCE.split(line) if s.strip()]


_KR_LINE = re.compile(r"\bKR\s*\d|key result|objective|\btarget|\bcurrent\b|\bMRR\b|\bprogress\b", re.I)
_ESTIMATE = re.compile(r"~|≈|\bestimate", re.I)
_LIST_NUMBER = re.compile(r"^(\s*(?:[-*+]\s+)?)\d+[.)](?=\s)")


def _on_topic(fig: Figure, sentence: str, line: str, known: Known) -> bool:
    """``known`` states ``fig`` on a line about the sentence's subject (else its line's): a number that
    only occurs elsewhere supports nothing. A sentence and line of no words take any line."""
    subjects: list[frozenset[str] | None] = [w for w in (words_of(sentence), words_of(line)) if w] or [None]
    return any(direct(fig, known.about(words)) for words in dict.fromkeys(subjects))


_KR_NAMED = re.compile(r"\bKRs?\b|\bkey results?\b|\bobjectives?\b", re.I)


def _beside(fig: Figure, anchors: list[Figure], known: Known) -> bool:
    """A line of the notes states ``fig`` beside a supported figure of the claim's sentence or block
    ("210 labeled, 90 to go" / "once all 300 are in": 210/300 tickets labeled)."""
    values = {round(a.value, 6) for a in anchors if len(re.sub(r"\D", "", a.text)) >= 2}
    if not values:
        return False
    lines = [x for x in known.lines if values & {round(g.value, 6) for g in x.figures if not (g.label or g.year)}]
    return direct(fig, Known(lines))


def _stated(fig: Figure, line: str, facts: Facts) -> bool:
    """A note the model was not shown states ``fig`` on a line of the reply line's topic."""
    return direct(fig, facts.known.about(words_of(line)))


def _supports(fig: Figure, line: str, here: list[Figure], today: date, facts: Facts) -> bool:
    """Does ``facts`` support ``fig`` (of reply line ``line``, beside the supported figures ``here``)
    by one step of arithmetic, or a count of days from the dates of the line (else of its topic)?"""
    topics = facts.known.topics(words_of(line), here, known_dates(line, today))
    mine = [g for g in here if g is not fig]  # the reply line's figures, or one line's (one table's) of the notes
    if operands_of(fig, mine):
        return derived(fig, mine, line) is not None  # "27 of 50, which is 54%": from the figures it names
    if any(derived(fig, ops, line) is not None for ops in [mine, *([g for r in t for g in r.figures] for t in topics)]):
        return True
    named = known_dates(line, today)  # (each checked as a date on its own)
    topic = {d for t in topics for r in t for d in r.dates}
    # from the dates the line names to today and to the dates of its topic; else from its topic's dates to today
    spans = day_counts(fig, named, today, topic) if named else day_counts(fig, topic, today)
    return any(near(x, fig) for x in spans)


def _figures(prose: str, grounds: Grounds, strictness: Strictness, result: Review) -> None:
    anchors: list[Figure] = []  # the supported figures of the block's lines so far
    for line in prose.splitlines():
        if not line.strip():
            anchors = []
        if _ESTIMATE.search(line):
            continue  # the model's own estimate, marked as one
        before: list[Figure] = []  # the supported figures of the line's earlier sentences
        for sentence in sentences(line):
            before += _sentence_figures(sentence, line, before, anchors, grounds, strictness, result)
        anchors += before


def _sentence_figures(line: str, whole: str, before: list[Figure], anchors: list[Figure], grounds: Grounds,
                      strictness: Strictness, result: Review) -> list[Figure]:
    """Check the figures of one sentence of the line ``whole`` (``before``: the supported figures of
    the sentences before it on its line, "… 76.5% against 90%. That's a 13.5-point gap."; ``anchors``:
    those of the lines before it in its block); its supported figures. Week numbers, years, ids, list
    numbers and key results' numbers are not figures to match."""
    facts = grounds.facts
    figs = [f for f in figures_of(_LIST_NUMBER.sub(r"\1", without_dates(line))) if not (f.label or f.year)
            and not (_KR_NAMED.search(line) and f.cls == PLAIN and f.value in facts.known.labels)]
    here = [f for f in figs if _on_topic(f, line, whole, facts.known)]
    here += [f for f in figs if f not in here and _beside(f, [*anchors, *before, *here], facts.known)]
    for fig in figs:  # stated in a note the agent may read: named as the source
        likely = _sharing(words_of(line))
        if fig not in here and (source := _lookup(grounds, partial(_stated, fig, line), likely,
                                                   keys_for(fig))) is not None:
            here.append(fig)
            result.found_in[fig.text] = source
    for fig in figs:
        if fig in here or not significant(fig, strictness is Strictness.STRICT, line, _KR_LINE):
            continue
        if _supports(fig, line, here, grounds.today, facts) or derived(fig, before + here, line) is not None:
            continue
        likely = _sharing(words_of(line), [g.value for g in here], known_dates(line, grounds.today))
        source = _lookup(grounds, partial(_supports, fig, line, here, grounds.today), likely, {"has:v", "has:d"})
        if source is not None:
            result.found_in[fig.text] = source
            continue
        result.findings.append(_unsupported_figure(fig, line, here, grounds))
    return here


def _unsupported_figure(fig: Figure, line: str, here: list[Figure], grounds: Grounds) -> Finding:
    operands = [g for g in here if g is not fig and not (g.label or g.year)]
    steps = [x for x in candidates(fig, operands, line) if x > 0]
    if steps and (fig.cls == "pct" or len(operands) >= 2):  # a percentage: the share first (27 of 50 is 54%)
        best = steps[0] if fig.cls == "pct" else min(steps, key=lambda x: abs(x - fig.value))
        shown = f"{best:.{fig.places}f}" if fig.places > 0 else f"{round(best):,}"
        return Finding(Kind.DERIVED.value, fig.text, "the figures beside it do not give it",
                       f"one step from {', '.join(g.text for g in operands)} gives {shown}")
    kind = Kind.DERIVED if fig.cls == "span" else Kind.FIGURE
    why = ("this count of days is not the distance from today to a date in the notes" if kind is Kind.DERIVED
           else "the notes give this figure only about something else (mark your own estimate with ~)"
           if direct(fig, grounds.facts.known) else
           "this figure is not in the notes you were given (mark your own estimate with ~)")
    return Finding(kind.value, fig.text, why, _figure_hint(fig, line, grounds))


def _figure_hint(fig: Figure, line: str, grounds: Grounds) -> str:
    """Where to look for a figure: the line on its topic with a figure of its kind (a rate for
    "50 per second"), in what the model was shown, else in a note the agent may read."""
    if fig.cls in (PLAIN, "money") or _nearest(line, grounds.facts.text, fig.cls)[1]:
        return _nearest_line(line, grounds.facts, want="figure", cls=fig.cls)
    source = grounds.find(lambda facts: _nearest(line, facts.text, fig.cls)[1] > 0, _sharing(words_of(line)),
                          {"has:v"})
    facts = grounds.note_facts(source) if source is not None else None
    if source is None or facts is None:
        return _nearest_line(line, grounds.facts, want="figure")
    return f"[[{source.removesuffix('.md')}]] says: \"{_nearest(line, facts.text, fig.cls)[0][:140]}\""


def _nearest(line: str, text: str, cls: str | None) -> tuple[str, int]:
    """The line of ``text`` on the same topic as ``line`` (most words in common) with a figure (of the
    unit class ``cls``, when one is given and not plain), and how many words it shares."""
    words = words_of(line)
    best, score = "", 0
    for raw in text.splitlines():
        if not any(c.isdigit() for c in raw):
            continue
        figs = figures_of(without_dates(raw))
        has = any(f.cls == cls for f in figs) if cls not in (None, PLAIN, "money") else bool(figs)
        overlap = len(words_of(raw) & words) if has else 0
        if overlap > score:
            best, score = raw.strip(), overlap
    return best, score


def _nearest_line(line: str, facts: Facts, want: str, cls: str | None = None) -> str:
    """The line of the notes on the same topic as the claim's line, quoted, as where to look."""
    if want == "figure":
        best = _nearest(line, facts.text, cls)[0]
        return f"the notes say: \"{best[:140]}\"" if best else ""
    words = words_of(line)
    best, score = "", 0
    for raw in facts.text.splitlines():
        overlap = len(words_of(raw) & words) if dates_in(raw) else 0
        if overlap > score:
            best, score = raw.strip(), overlap
    return f"the notes say: \"{best[:140]}\"" if best else ""


def _named(name: str, facts: Facts, grounds: Grounds | None = None) -> bool:
    first = name.split()[0].lower()
    if grounds is not None and (grounds.is_named(name.lower()) or grounds.is_named(first)):
        return True
    if first in facts.capitals:
        return True
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", facts.text, re.I) is not None


_COMMON = re.compile(r"[^\W\d_][\w'’-]*")


def _people(prose: str, grounds: Grounds) -> list[Named]:
    """The names a reply gives, by cue (``names_in``) and every first-and-last name wherever it
    stands: two capitalised words neither of which the notes or the reply write in lower case."""
    found = names_in(prose)
    lower = {w for w in _COMMON.findall(prose) if w[0].islower()} | grounds.facts.lower
    have = {n.name.lower() for n in found}
    for pair in name_pairs(prose):
        if pair.lower() not in have and not {w.lower() for w in pair.split()} & lower:
            found.append(Named(pair, NameKind.PERSON))
    return found


def _names(prose: str, grounds: Grounds, result: Review) -> None:
    for named in _people(prose, grounds):
        if _named(named.name, grounds.facts, grounds):
            continue
        first = named.name.split()[0].lower()
        source = _lookup(grounds, partial(_named, named.name), {f"n:{first}"})
        if source is not None:
            result.found_in[named.name] = source
            continue
        what = "no one" if named.kind is NameKind.PERSON else "no project"
        known = sorted({w for w in grounds.facts.capitals if len(w) > 2})
        close = difflib.get_close_matches(named.name.split()[0].lower(), known, 3, 0.7)
        result.findings.append(Finding(named.kind.value, named.name,
                                       f"{what} of that name is in the notes you were given or may read",
                                       "like names in the notes: " + ", ".join(c.title() for c in close)
                                       if close else ""))


# --- what a reply says ----------------------------------------------------------------------

_URL = re.compile(r"https?://\S+")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[\[[^\[\]\n]*\]\]")


def _prose(text: str) -> str:
    """``text`` without code, links and addresses: what it states in words."""
    pieces, last = [], 0
    for start, end in code_fence_ranges(text):
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    prose = "\n".join(pieces)
    for pattern in (_INLINE_CODE, _LINK, _URL):
        prose = pattern.sub(" ", prose)
    return prose
