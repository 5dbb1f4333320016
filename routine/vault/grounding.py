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
from dataclasses import replace
from datetime import date
from functools import partial
from pathlib import PurePosixPath
from typing import Iterable

from routine.vault import contexts
from routine.vault.dating import check_dates
from routine.vault.figures import (
    PLAIN,
    Figure,
    Known,
    added,
    candidates,
    day_counts,
    derived,
    direct,
    figures_of,
    keys_for,
    near,
    operands_of,
    significant,
    states,
    words_of,
)
from routine.vault.findings import ESTIMATE, Finding, Kind, Review, Strictness, lookup, nearest, nearest_line, sharing
from routine.vault.grounds import Facts, Grounds, grounds_for
from routine.vault.mentions import (
    Named,
    NameKind,
    capitalised,
    folders_in,
    known_dates,
    name_pairs,
    names_in,
    sentences,
    without_dates,
)
from routine.vault.notes import code_fence_ranges, wikilinks

__all__ = ["Facts", "Finding", "Grounds", "Kind", "Review", "Strictness", "check", "findings_text", "grounds_for",
           "review", "sentences"]


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
    check_dates(prose, grounds, result)
    _figures(prose, grounds, strictness, result)
    _names(prose, grounds, result, folders_in(reply))
    unique: dict[tuple[str, str], Finding] = {}
    for f in result.findings:
        unique.setdefault((f.kind, f.claim), f)
    result.findings = list(unique.values())
    return result


def findings_text(findings: list[Finding]) -> str:
    return "\n".join(f"- {f.line()}" for f in findings)


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


_KR_LINE = re.compile(r"\bKR\s*\d|key result|objective|\btarget|\bcurrent\b|\bMRR\b|\bprogress\b", re.I)
_LIST_NUMBER = re.compile(r"^(\s*(?:[-*+]\s+)?)\d+[.)](?=\s)")


def _on_topic(fig: Figure, sentence: str, line: str, known: Known) -> bool:
    """``known`` states ``fig`` on a line about the sentence's subject (else its line's): a number that
    only occurs elsewhere supports nothing. A sentence and line of no words take any line."""
    subjects: list[frozenset[str] | None] = [w for w in (words_of(sentence), words_of(line)) if w] or [None]
    return any(states(fig, known, words) for words in dict.fromkeys(subjects))


_WORKED = re.compile(r"\b(?:more|left|to go|remain\w*|short|behind|ahead|gap|need\w*|fewer|less|between|difference"
                     r"|total|in all|combined|together|plus|sum|other|rest|leaves?|share|of the|each|per|a day"
                     r"|a week)\b"
                     r"|[+×=]|\d\s*[x*/]\s*\d", re.I)
_IMPERATIVE = re.compile(r"^\W*(?:[A-Z][\w ]{0,20}:\W*)?[a-z]")  # "*Test:* time the first 10 tickets"
_SAMPLE = re.compile(r"\b(?:the|a)\s+(?:first|next|top)\s+$|\ba sample of\s+$", re.I)


def _chosen(fig: Figure, sentence: str) -> bool:
    """A number the reply proposes, not states: the sample an instruction takes ("time the first 10
    tickets", "try the next 20")."""
    at = sentence.find(fig.text)
    return at > 0 and bool(_SAMPLE.search(sentence[:at])) and bool(_IMPERATIVE.match(_clause_start(sentence, at)))


def _clause_start(sentence: str, at: int) -> str:
    """The clause of ``sentence`` that ends at ``at``, from its start (after a label's "Test:")."""
    cut = max(sentence.rfind(sep, 0, at) for sep in (". ", "; ", "— ", ": "))
    return sentence[cut + 2:at] if cut >= 0 else sentence[:at]


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
    return states(fig, facts.known, words_of(line))


def _supports(fig: Figure, line: str, here: list[Figure], today: date, facts: Facts,
              near_by: tuple[Figure, ...] = (), close: int = 0) -> bool:
    """Does ``facts`` support ``fig`` (of reply line ``line``, beside the supported figures ``here``,
    and ``near_by``, those of the sentences and lines just before it) by one step of arithmetic —
    from figures of the reply, of one line (one table) of the notes on its topic, or one of each —,
    or a count of days from the dates of the line (else of its topic)?"""
    topics = facts.known.topics(words_of(line), here, known_dates(line, today))
    mine = [g for g in here if g is not fig]  # the reply line's figures, or one line's (one table's) of the notes
    if operands_of(fig, mine):  # "27 of 50, which is 54%": from the figures it names (added to one of the notes)
        return derived(fig, mine, line) is not None or any(added(fig, mine, [g for r in t for g in r.figures])
                                                           for t in topics)
    context = [g for g in dict.fromkeys([*near_by, *mine]) if g is not fig]
    if close:  # a figure a closer line gives to another thing: worked out from lines as close only
        words = words_of(contexts.clause_of(fig, line))
        topics = [t for t in topics if len(words & frozenset().union(*(r.words | r.context for r in t))) >= close]
    noted = [[g for r in t for g in r.figures] for t in topics]
    if any(derived(fig, ops, line) is not None for ops in [mine, *noted]):
        return True
    if context and any(derived(fig, [*context, *ops], line, strict=True) is not None for ops in noted):
        return True
    named = known_dates(line, today)  # (each checked as a date on its own)
    topic = {d for t in topics for r in t for d in r.dates}
    # from the dates the line names to today and to the dates of its topic; else from its topic's dates to today
    spans = day_counts(fig, named, today, topic) if named else day_counts(fig, topic, today)
    return any(near(x, fig) for x in spans)


def _figures(prose: str, grounds: Grounds, strictness: Strictness, result: Review) -> None:
    anchors: list[Figure] = []  # the supported figures of the block's lines so far
    last: list[Figure] = []  # those of the line before (operands a list item works on: "€450 … €310" then "69%")
    for line in prose.splitlines():
        if not line.strip():
            anchors, last = [], []
        before: list[Figure] = []  # the supported figures of the line's earlier sentences
        for sentence in sentences(line):
            if ESTIMATE.search(sentence):
                continue  # the model's own estimate, marked as one
            before += _sentence_figures(sentence, line, before, anchors, grounds, strictness, result, last)
        anchors += before
        last = before or last


def _sentence_figures(line: str, whole: str, before: list[Figure], anchors: list[Figure], grounds: Grounds,
                      strictness: Strictness, result: Review, last: Iterable[Figure] = ()) -> list[Figure]:
    """Check the figures of one sentence of the line ``whole`` (``before``: the supported figures of
    the sentences before it on its line, "… 76.5% against 90%. That's a 13.5-point gap."; ``anchors``:
    those of the lines before it in its block); its supported figures. Week numbers, years, ids, list
    numbers and key results' numbers are not figures to match."""
    facts = grounds.facts
    figs = [f for f in figures_of(_LIST_NUMBER.sub(r"\1", without_dates(line))) if not (f.label or f.year)
            and not (_KR_NAMED.search(line) and f.cls == PLAIN and f.value in facts.known.labels)]
    figs = [f for f in figs if not _a_name(f, line, grounds)]
    here = [f for f in figs if _on_topic(f, line, whole, facts.known)]
    here += [f for f in figs if f not in here and _beside(f, [*anchors, *before, *here], facts.known)]
    for fig in figs:  # stated in a note the agent may read: named as the source
        likely = sharing(words_of(line))
        if fig not in here and (source := lookup(grounds, partial(_stated, fig, line), likely,
                                                   keys_for(fig))) is not None:
            here.append(fig)
            result.found_in[fig.text] = source
    strict = strictness is Strictness.STRICT
    off: dict[int, Finding] = {}  # figures the notes state, but of something else
    for fig in [f for f in here if f in figs and (significant(f, strict, line, _KR_LINE) or f.spelled)]:
        if (finding := _in_context(fig, line, grounds, result.found_in.get(fig.text))) is not None:
            here.remove(fig)
            result.found_in.pop(fig.text, None)
            off[id(fig)] = finding
    for fig in [f for f in figs if significant(f, strict, line, _KR_LINE)]:
        if (finding := _worked_wrong(fig, line, here, grounds)) is not None:
            if fig in here:
                here.remove(fig)
            result.found_in.pop(fig.text, None)
            result.findings.append(finding)
            figs.remove(fig)
    for fig in figs:
        if fig in here or _chosen(fig, line):
            continue
        if id(fig) not in off and fig.cls != PLAIN and not _WORKED.search(contexts.clause_of(fig, line)) \
                and (said := contexts.otherwise(fig, line, [grounds.facts], grounds.today)):
            # a figure of a unit no note states, where a line says the clause with another ("keeps about six
            # weeks in foil" where the notes say "keeps three to four weeks wrapped in foil"): not worked out
            off[id(fig)] = Finding(Kind.FIGURE.value, fig.text, "the notes say this otherwise",
                                   f"the notes say: \"{said[:140]}\"")
        if not significant(fig, strict, line, _KR_LINE):
            if id(fig) in off and fig.spelled:
                result.findings.append(off[id(fig)])
            continue
        near_by = (*before, *last) if id(fig) not in off else tuple(before)
        # a figure the notes give to another thing is worked out only where the reply says it works one out
        # (not one the notes give to someone else than the one the clause names: that is a person's own figure)
        worked = id(fig) not in off or (_WORKED.search(contexts.clause_of(fig, line)) is not None
                                        and off[id(fig)].why != _OWNED_WHY)
        close = max(0, contexts.otherwise_scored(fig, line, [grounds.facts], grounds.today)[0] - 1) \
            if id(fig) in off else 0
        if (worked and _supports(fig, line, here, grounds.today, facts, near_by, close)) \
                or derived(fig, [*near_by, *here], line) is not None:
            continue
        likely = sharing(words_of(line), [g.value for g in here], known_dates(line, grounds.today))
        source = lookup(grounds, partial(_supports, fig, line, here, grounds.today, near_by=near_by, close=close),
                         likely, {"has:v", "has:d"}) if worked else None
        if source is None and id(fig) in off and off[id(fig)].why != _OWNED_WHY:  # said of it in a note it may read?
            source = lookup(grounds, partial(_stated_in_context, fig, line, grounds), sharing(words_of(line)),
                             keys_for(fig))
        if source is not None:
            result.found_in[fig.text] = source
            continue
        if id(fig) in off:
            result.findings.append(off[id(fig)])
            continue
        result.findings.append(_unsupported_figure(fig, line, here, grounds))
    return here


_NAME_BEFORE = re.compile(r"(?<![\w.])([A-ZÀ-Þ][\w-]*) $")


def _a_name(fig: Figure, line: str, grounds: Grounds) -> bool:
    """A number the notes write after the same capitalised word is part of a name, not a figure
    ("Auer Type 1050", "Python 3.10", "Route 9"), wherever the reply puts it."""
    at = line.find(fig.text)
    word = _NAME_BEFORE.search(line, 0, at) if at > 0 else None
    number = re.match(r"[\d.,]+", fig.text)
    if word is None or number is None or word[1].upper() in ("KR", "Q") or word.end() != at:
        return False
    name = re.compile(rf"(?<![\w.]){re.escape(word[1])} {re.escape(number[0].rstrip('.,'))}(?![\d.,]\d)")
    return bool(name.search(grounds.facts.text)) or lookup(
        grounds, lambda facts: bool(name.search(facts.text)), {f"w:{w}" for w in words_of(word[1])}) is not None


_RESULT = re.compile(r"\b(?:so|leaving|leaves|which is|which makes|that's|that is|meaning)\b[^\d€$£%]{0,40}$", re.I)


def _worked_wrong(fig: Figure, sentence: str, here: list[Figure], grounds: Grounds) -> Finding | None:
    """A figure the sentence says it works out from two of its own ("at 41 hours, so he has 9 hours left
    before he hits 48"; "costs €3.24 and sells for €4.20, so we keep €1.16") that they do not give,
    however a note elsewhere happens to state that number: the finding, else None."""
    at = sentence.find(fig.text)
    if at <= 0 or not _RESULT.search(sentence[:at]) or _on_topic(fig, sentence, sentence, grounds.facts.known):
        return None  # (what the model was shown states it on the sentence's topic: read, not worked out)
    # (a bare number beside a figure of a unit is in that unit: "at 41 hours … before he hits 48")
    mine = [replace(g, cls=fig.cls, factor=fig.factor) if g.cls == PLAIN and fig.cls not in (PLAIN, "pct") else g
            for g in here if g is not fig and g.text != fig.text]
    if fig.cls == "span" or not operands_of(fig, mine) or derived(fig, mine, sentence) is not None \
            or not any(x > 0 for x in candidates(fig, mine, sentence)):
        return None
    return _unsupported_figure(fig, sentence, mine, grounds)


def _stated_in_context(fig: Figure, line: str, grounds: Grounds, facts: Facts) -> bool:
    """A note the model was not shown states ``fig`` on the reply line's topic, of the same thing."""
    return _stated(fig, line, facts) and _in_context(fig, line, grounds, facts=facts) is None


_OWNED_WHY = "the notes give this figure to someone else"


def _in_context(fig: Figure, sentence: str, grounds: Grounds, source: str | None = None,
                facts: Facts | None = None) -> Finding | None:
    """The finding about a figure the notes state, but of something else (``routine/vault/contexts.py``):
    another line says the reply's clause otherwise, the word after it is another figure's, or it is
    a past value given as now; None when it is said of the same thing."""
    texts = [grounds.facts]
    facts = facts or (grounds.note_facts(source) if source is not None else None)
    if facts is not None:
        texts.append(facts)
    for test, why in ((contexts.otherwise, "the notes say this otherwise"),
                      (contexts.swapped, "the notes give this figure to something else on that line"),
                      (contexts.past, "the notes give this as an earlier value, not as it is now"),
                      (contexts.owned, _OWNED_WHY),
                      (contexts.other_week, "the notes give this figure for another week")):
        said = test(fig, sentence, texts, grounds.today)
        if said:
            return Finding(Kind.FIGURE.value, fig.text, why, f"the notes say: \"{said[:140]}\"")
    return None


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
    if fig.cls in (PLAIN, "money") or nearest(line, grounds.facts.text, fig.cls)[1]:
        return nearest_line(line, grounds.facts, want="figure", cls=fig.cls)
    source = grounds.find(lambda facts: nearest(line, facts.text, fig.cls)[1] > 0, sharing(words_of(line)),
                          {"has:v"})
    facts = grounds.note_facts(source) if source is not None else None
    if source is None or facts is None:
        return nearest_line(line, grounds.facts, want="figure")
    return f"[[{source.removesuffix('.md')}]] says: \"{nearest(line, facts.text, fig.cls)[0][:140]}\""


def _named(name: str, facts: Facts, grounds: Grounds | None = None) -> bool:
    """The notes name ``name``: a first name alone as they write it; a first and last name as a whole
    ("Priya Shah" is not "Priya Raman": a wrong surname is a person the notes do not know)."""
    words = name.split()
    first = words[0].lower()
    if grounds is not None and (grounds.is_named(name.lower()) or (len(words) == 1 and grounds.is_named(first))):
        return True
    if len(words) == 1 and first in facts.capitals:
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
    have |= {w.lower() for n in found for w in n.name.split()}
    for word in capitalised(prose):  # "… and Kestrel, the follow-up study": a name the notes never write
        if word.lower() not in have and word.lower() not in lower and word.lower() not in grounds.facts.words:
            found.append(Named(word, NameKind.PROJECT))
    return found


def _names(prose: str, grounds: Grounds, result: Review, folders: Iterable[Named] = ()) -> None:
    for named in dict.fromkeys([*_people(prose, grounds), *folders]):
        if _named(named.name, grounds.facts, grounds):
            continue
        first = named.name.split()[0].lower()
        source = lookup(grounds, partial(_named, named.name), {f"n:{first}"})
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
