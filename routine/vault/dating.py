"""Is each date of a reply in the notes, said of the thing the notes give it to? (pure, no model)

Used by ``routine/vault/grounding.py``. A date is supported when what the model was shown (or a
note the agent may read) states it on a line of the sentence's topic, or it is today, yesterday or
tomorrow; the weekday written beside it must be that date's. It is held where the notes give it to
something else: the word that gives it its role ("by", "due") stands before another date on every
line with it; a line says what happens ("the office crowd is gone from") with another date, far
better than any line with this one; the notes label another date with what the reply says happens on
it ("Oven delivery: 2027-01-08" for "delivered on 15 January"). A date the sentence counts from
another ("ten working days from 20 November … Friday 4 December") is worked out, not invented.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from functools import partial

from routine.vault import contexts
from routine.vault.figures import PLAIN, Figure, Known, Line, figures_of, words_of
from routine.vault.findings import ESTIMATE, Finding, Kind, Review, lookup, nearest_line, sharing
from routine.vault.grounds import Facts, Grounds
from routine.vault.mentions import MONTHS, WEEKDAYS, Written, dated, dates_in, sentences, without_dates


def _date_ok(written: Written, facts: Facts, today: date) -> date | None:
    """The date of ``facts`` (or today ±1) that ``written`` names, or None."""
    known = facts.dates | {today + timedelta(days=n) for n in (-1, 0, 1)}
    if written.year:
        on = written.on(written.year)
        return on if on in known else None
    return next((d for d in sorted(known, key=lambda d: abs((d - today).days)) if written.matches(d)), None)


def _topical(facts: Facts, sentence: str, line: str = "", shown: bool = False) -> Facts:
    """``facts`` cut to the lines on the sentence's topic (a word or a figure in common), else on its
    line's; all of them when neither names a topic."""
    words, figures = words_of(sentence), figures_of(without_dates(sentence))
    if not words and not figures:
        return facts  # "Friday 20 November.": a date on its own, as a heading gives it
    found = {id(x): x for x in facts.known.related(words, figures)}  # the sentence's topic, or its line's
    found.update((id(x), x) for x in facts.known.related(words_of(line), figures_of(without_dates(line))))
    if shown:  # "# Friday 20 November 2026": the day of a note the model was shown
        found.update((id(x), x) for x in facts.known.lines if x.dates and not x.words)
    lines = list(found.values())
    return Facts(Known(lines), frozenset(d for x in lines for d in x.dates), frozenset(), frozenset(), "")


def _date_in(written: Written, sentence: str, line: str, today: date, facts: Facts) -> bool:
    """A note states the date on a line of the sentence's topic."""
    return _date_ok(written, _topical(facts, sentence, line), today) is not None


def check_dates(prose: str, grounds: Grounds, result: Review) -> None:
    """Add to ``result`` a finding for each date of ``prose`` the notes do not support."""
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
    if ESTIMATE.search(line) and _ROUGHLY.search(sentence[:sentence.find(written.text)]):
        return None  # "~3 more days, so around Dec 12": the model's own estimate, marked as one
    # on a line of the sentence's topic in what the model was shown ("due 2026-12-20" of the report is
    # not the runs' 2026-12-20), and not the other date of its line ("by 2027-01-08 (deadline 2027-01-29)")
    topical = _topical(grounds.facts, sentence, line, shown=True)
    on = _date_ok(written, topical, grounds.today)
    if on is not None and _swapped(written, sentence, on, grounds.facts.text):
        return Finding(Kind.DATE.value, written.text, "the notes give this date to something else",
                       nearest_line(sentence, grounds.facts, want="date"))
    if on is not None and on not in topical.dates and (other := _dated_otherwise(written, sentence, grounds)):
        return Finding(Kind.DATE.value, written.text, "the notes give another date for this", other)
    if on is None:  # else on a line of its topic in a note the agent may read
        source = lookup(grounds, partial(_date_in, written, sentence, line, grounds.today),
                         {f"d:{month}-{written.day}" for _, month in written.months(grounds.today)})
        facts = grounds.note_facts(source) if source is not None else None
        if source is not None and facts is not None:
            result.found_in[written.text] = source
            on = _date_ok(written, facts, grounds.today)
    if on is None and _worked_out(written, sentence, grounds.today):
        return None  # "ten working days from 20 November puts it around Friday 4 December"
    if on is None:
        return Finding(Kind.DATE.value, written.text, "this date is not in the notes you were given",
                       nearest_line(sentence, grounds.facts, want="date"))
    source = result.found_in.get(written.text)
    found = grounds.note_facts(source) if source else None
    if (other := _dated_elsewhere(written, sentence, grounds, found) or _labelled(written, sentence, grounds, found)):
        return Finding(Kind.DATE.value, written.text, "the notes give another date for this", other)
    if written.weekday is not None and on.weekday() != written.weekday:
        return Finding(Kind.DATE.value, written.text, f"{on:%d %B %Y} is a {WEEKDAYS[on.weekday()].title()}")
    return None


_SPAN = re.compile(r"\b(\d{1,3}|[a-z]+(?:-[a-z]+)?)\s+(working\s+|business\s+|calendar\s+|school\s+)?(days?|weeks?)"
                   r"\s+(?:from|after|since|before|of)\b", re.I)


def _worked_out(written: Written, sentence: str, today: date) -> bool:
    """``written`` is another date of the sentence moved by the span the sentence counts from it
    ("ten working days from 20 November … Friday 4 December", "two weeks after 2026-11-20 … 4 Dec")."""
    found = [(figures_of(m[1]), bool(m[2]) and m[2].lower().startswith(("work", "busi", "school")), m[3])
             for m in _SPAN.finditer(sentence)]
    spans = [(f[0].value * (7 if unit.lower().startswith("week") else 1), working)
             for f, working, unit in found if f and 0 < f[0].value <= 400]
    for start in dated([w for w in dates_in(sentence) if w.text != written.text], today) if spans else ():
        for count, working in spans:
            for sign in (1, -1):
                day = _add_days(start, int(count), working, sign)
                if written.matches(day):
                    return True
    return False


def _add_days(start: date, count: int, working: bool, sign: int) -> date:
    """``start`` moved ``count`` days (working days: Monday to Friday) forward (sign 1) or back."""
    if not working:
        return start + timedelta(days=sign * count)
    day = start
    while count > 0:
        day += timedelta(days=sign)
        count -= day.weekday() < 5
    return day


_EVENT_ROLE = re.compile(r"\b(?:is|on|as of|due|by|until|till|moved to|at)\W*$", re.I)


def _dated_otherwise(written: Written, sentence: str, grounds: Grounds) -> str:
    """For a date only today's, yesterday's or tomorrow's, stated as when a thing is ("the sync is on
    24 November", "as of 2026-11-23"): the line of the notes about that thing (two words in common)
    that gives it another date, quoted; "" when none does."""
    if not _EVENT_ROLE.search(sentence[:max(0, sentence.find(written.text))][-16:]):
        return ""
    words = words_of(sentence)

    def other(facts: Facts) -> Line | None:
        return next((x for x in facts.known.lines if x.dates and len((x.words | x.context) & words) >= 2
                     and not any(written.matches(d) for d in x.dates)), None)

    found = other(grounds.facts)
    source = None if found else lookup(grounds, lambda f: other(f) is not None, sharing(words), {"has:d"})
    facts = grounds.facts if found else grounds.note_facts(source) if source else None
    hit = other(facts) if facts is not None else None
    if hit is None:
        return ""
    where = f"[[{source.removesuffix('.md')}]] gives" if source else "the notes give"
    return f"{where} {', '.join(f'{d:%d %B %Y}' for d in sorted(hit.dates))}"


_SAID_WORDS = 7  # the words before a date that say what happens on it
_DATE_AT_LEAST = 3  # words the clause shares with the line of another date, at least, and 2 more than with its own


def _dated_elsewhere(written: Written, sentence: str, grounds: Grounds, found: Facts | None) -> str:
    """A line of the notes says the reply's clause (what happens: "the office crowd is gone from",
    "pre-orders close on") with another date, far better than any line with this one: that line's
    dates, quoted; "" when none does (a date the notes have, for something else)."""
    clause = contexts.clause_of(Figure(0, 0, PLAIN, 1, written.text), sentence)
    said = " ".join(clause[:max(0, clause.find(written.text))].split()[-_SAID_WORDS:])  # what it is the date of
    words = words_of(said) - words_of(" ".join(MONTHS))

    def score(line: Line) -> int:
        return len((line.words | line.context) & words)

    texts = [grounds.facts, *([found] if found is not None else [])]
    have = max((score(x) for f in texts for x in f.known.lines if any(written.matches(d) for d in x.dates)),
               default=0)
    need = max(_DATE_AT_LEAST, have + 2)

    def other(facts: Facts) -> Line | None:
        return max((x for x in facts.known.lines if x.dates and not any(written.matches(d) for d in x.dates)
                    and score(x) >= need), key=score, default=None)

    hit = other(grounds.facts)
    source = None if hit else lookup(grounds, lambda f: other(f) is not None, sharing(words), {"has:d"})
    facts = grounds.note_facts(source) if source else None
    hit = hit or (other(facts) if facts is not None else None)
    if hit is None:
        return ""
    where = f"[[{source.removesuffix('.md')}]] gives" if source else "the notes give"
    return f"{where} {', '.join(f'{d:%d %B %Y}' for d in sorted(hit.dates))}"


_EVENT_ON = re.compile(r"(?<!\d )\b([^\W\d_][\w-]{3,})\s+on\s+(?:the\s+)?$", re.I)
_LABEL_DATE = r"\b{}\w*\s*:\s*"  # "Oven delivery: 2027-01-08": a date labelled with what happens on it


def _labelled(written: Written, sentence: str, grounds: Grounds, found: Facts | None) -> str:
    """What the reply says happens on the date ("is only delivered on 15 January") labels another date
    in the notes ("Oven delivery: 2027-01-08") and never this one: that date, quoted; "" else."""
    m = _EVENT_ON.search(sentence[:max(0, sentence.find(written.text))])
    stem = m[1][:5].lower() if m else ""
    if len(stem) < 5 or words_of(stem) & _NOT_EVENTS:
        return ""
    label = re.compile(_LABEL_DATE.format(re.escape(stem)), re.I)

    def labelled(text: str) -> set[date]:
        out: set[date] = set()
        for hit in label.finditer(text) if stem in text.lower() else ():
            days = dates_in(text[hit.end():hit.end() + 24])
            if days and text.find(days[0].text, hit.end()) == hit.end():
                out |= dated(days[:1], grounds.today)
        return out

    said = set().union(*(labelled(f.text) for f in [grounds.facts, *([found] if found is not None else [])]))
    if not said:
        source = lookup(grounds, lambda f: bool(labelled(f.text)), sharing(words_of(stem)), {"has:d"})
        facts = grounds.note_facts(source) if source else None
        said = labelled(facts.text) if facts is not None else set()
    if not said or any(written.matches(d) for d in said):
        return ""
    return f"the notes give {', '.join(f'{d:%d %B %Y}' for d in sorted(said))}"


_NOT_EVENTS = frozenset(words_of("due deadline date set planned moved expected starts start ends end held"))


_DATE_ROLE = re.compile(r"\b(by|until|till|due|deadline|from|since|before|after|as of|starts?|ends?)\W*$", re.I)


def _swapped(written: Written, sentence: str, on: date, text: str) -> bool:
    """The word that gives the date its role ("by", "due", "as of") stands, on every line of the notes
    with that date, before another date of the line and not before this one."""
    role = _DATE_ROLE.search(sentence[:max(0, sentence.find(written.text))][-24:])
    if role is None:
        return False
    word, lines = role[1].lower(), 0
    for raw in text.splitlines():
        found = dates_in(raw)
        if not any(w.matches(on) for w in found) or len(found) < 2:
            continue
        lines += 1
        roles = {id(w): (m[1].lower() if (m := _DATE_ROLE.search(raw[:raw.find(w.text)][-24:])) else "")
                 for w in found}
        if any(w.matches(on) and roles[id(w)] == word for w in found) or \
                not any(roles[id(w)] == word for w in found if not w.matches(on)):
            return False
    return lines > 0
