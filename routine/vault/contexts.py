"""Is a figure of a reply said of the thing the notes give it to? (pure, no model)

A number that occurs in the notes supports a reply's figure only where the notes say it of the same
thing; the commonest way a small model gets a figure wrong is to take the right kind of number from
the wrong place. Three such ways are read here, each from the notes' own wording:

- **another line says it otherwise**: the reply's clause matches one segment of the notes (a clause
  of a line, a table row) far better than any segment that states the figure — more of its words,
  other figures and dates in common — and that segment gives a figure of the same unit, not this one
  ("the signup reminder to the 27 dispatchers who have not joined" where the task says 23);
- **a role swapped**: the word the reply puts right after the figure belongs, on every line that
  states it, to another figure of that line ("€2,000 spent" where the notes say "€1,350 spent of
  €2,000"; "85% of signups" where they say "current 82.1% of signups / target 85%");
- **a past value given as now**: every line that states the figure marks it as past ("was 1,610 ms",
  "from 19") and the reply's clause says nothing of the past.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from routine.vault.figures import PLAIN, Figure, Known, Line, derived, direct, figures_of, words_of
from routine.vault.grounds import Facts
from routine.vault.mentions import dated, dates_in, without_dates

_CLAUSE = re.compile(r"(?<=[;.!?])\s+|\s+[—–]\s+|,?\s+(?:and|but|while|whereas)\s+(?=\S)"
                     r"|,\s+(?:so|which|because|though|although)\s+")
_NOTE_CLAUSE = re.compile(r"(?<=[;.!?])\s+(?=\S)")
_LINK_TARGET = re.compile(r"\[\[[^\]|\n]*\|?")
_OPERAND = re.compile(r"[×*+=]|\s[x/-]\s|\bat\b.*\beach\b|\btimes\b", re.I)


def _around(fig: Figure, clause: str) -> str:
    """The words just before and after ``fig`` in ``clause`` (a dozen characters each side)."""
    at = clause.find(fig.text)
    return clause[max(0, at - 12):at] + " " + clause[at + len(fig.text):at + len(fig.text) + 12] if at >= 0 else ""


_UNIT_STEMS = frozenset(words_of("seconds minutes hours days weeks months percent euros dollars"))
BEST_AT_LEAST = 3  # what the better segment shares with the clause, at least
BY_AT_LEAST = 2    # and by how much more than the best segment that states the figure


@dataclass(frozen=True)
class Segment:
    """A clause of a note's line (a table row whole) with a figure: its words, figures and dates."""

    text: str
    words: frozenset[str]
    figures: tuple[Figure, ...]
    dates: frozenset[date]
    known: Known


def segments(facts: Facts) -> tuple[Segment, ...]:
    """The segments of a text that have a figure, from its facts (read once while they are kept)."""
    kept = facts.memo.get("segments")
    if kept is not None:
        return kept  # type: ignore[return-value]  # set below, always this type
    out: list[Segment] = []
    for line in facts.known.lines:
        if not line.text or line.heading:
            continue
        parts = [line.text] if line.table else _NOTE_CLAUSE.split(line.text)
        if len(parts) == 1:
            figures = tuple(f for f in line.figures if not (f.label or f.year))
            if figures:
                words = line.words | line.context | _summed(line, facts.known.lines)
                out.append(Segment(line.text.strip(), words, figures, frozenset(line.dates),
                                   Known([Line(words, figures, line.dates, 0)])))
            continue
        for part in parts:
            figures = tuple(f for f in figures_of(without_dates(_LINK_TARGET.sub(" ", part)))
                            if not (f.label or f.year))
            if figures:
                words = words_of(part) | line.context
                days = frozenset(d for d in line.dates if any(w.matches(d) for w in dates_in(part)))
                out.append(Segment(part.strip(), words, figures, days, Known([Line(words, figures, tuple(days), 0)])))
    found = facts.memo["segments"] = tuple(out)
    return found


_TOTAL = re.compile(r"^\W*(?:grand\s+|sub)?(?:total|sum|all)\b", re.I)


def _summed(line: Line, lines: list[Line]) -> frozenset[str]:
    """The words of the rows a table's total row sums ("| **total** | **€3.24** |" is the cost of what
    each row above it names): a reply says the total of those things."""
    if not line.table or not _TOTAL.match(line.text.strip().strip("|")):
        return frozenset()
    return frozenset().union(*(other.words for other in lines if other.block == line.block and other.table))


def clause_of(fig: Figure, sentence: str) -> str:
    """The clause of ``sentence`` that holds ``fig`` (a sentence joined by "and", "but", a dash)."""
    at = sentence.find(fig.text)
    start = 0
    for part in _CLAUSE.split(sentence):
        found = sentence.find(part, start)
        if found <= at < found + len(part):
            return part
        start = found + len(part)
    return sentence


def _alike(a: Figure, b: Figure) -> bool:
    return a.cls == b.cls or (a.cls == PLAIN and b.cls == "money") or (a.cls == "money" and b.cls == PLAIN)


def _same(fig: Figure, other: Figure) -> bool:
    """``other`` (of the notes) is ``fig`` as written, in another unit or rounded."""
    return direct(fig, Known([Line(frozenset(), (other,), (), 0)]))


def _rival(fig: Figure, other: Figure, taken: list[Figure]) -> bool:
    """``other`` (of a segment) could be what the reply meant instead of ``fig``: a figure of its unit
    that is not one the reply's clause gives besides, and is more than a single digit."""
    return (other.cls == fig.cls and not _same(fig, other) and not any(_same(t, other) for t in taken)
            and (len(re.sub(r"\D", "", other.text)) >= 2 or other.cls != PLAIN))


def otherwise(fig: Figure, sentence: str, texts: list[Facts], today: date) -> str:
    """The segment of ``texts`` that says the reply's clause otherwise (``fig`` in the wrong
    context), quoted; "" when none does."""
    return otherwise_scored(fig, sentence, texts, today)[1]


def otherwise_scored(fig: Figure, sentence: str, texts: list[Facts], today: date) -> tuple[int, str]:
    """``otherwise``, with how much the segment shares with the reply's clause (0 and "": none)."""
    clause = clause_of(fig, sentence)
    words = words_of(clause) - _UNIT_STEMS
    if not words or _OPERAND.search(_around(fig, clause)):
        return 0, ""  # "(12 × 2.5 hours)": an operand the reply shows its arithmetic with
    taken = [f for f in figures_of(without_dates(clause)) if f.text != fig.text and not (f.label or f.year)]
    values = {round(f.value, 6) for f in taken}
    # the sentence's other figures say which row it reads, where that row counts the same thing
    # ("Tilia takes 50 sourdough and 40 croissants, €410" of "| Café Tilia | 60 sourdough, 40 croissants | €410 |")
    also = {round(f.value, 6) for f in figures_of(without_dates(sentence)) if not (f.label or f.year)} - values \
        - {round(fig.value, 6)}
    noun = _noun_after(sentence, sentence.find(fig.text) + len(fig.text))
    days = dated(dates_in(clause), today)
    best: tuple[int, str] = (0, "")
    have = 0
    for text in texts:
        for seg in segments(text):
            given = {round(g.value, 6) for g in seg.figures}
            score = len(words & seg.words) + len(values & given) + len(days & seg.dates)
            if noun and also & given and any(_noun_after(seg.text, seg.text.find(g.text) + len(g.text)) == noun
                                             for g in seg.figures if _rival(fig, g, taken)):
                score += len(also & given)
            if direct(fig, seg.known) or derived(fig, [*seg.figures, *taken], clause) is not None:
                have = max(have, score)  # (what the segment and the clause give in one step, too)
            elif score > best[0] and any(_rival(fig, g, taken) for g in seg.figures):
                best = (score, seg.text)
    if best[0] >= BEST_AT_LEAST and best[0] >= have + BY_AT_LEAST:
        return best
    return 0, ""


_WORD_AFTER = re.compile(r"\s*(of\s+(?:the\s+)?)?([^\W\d_][\w-]*)")
# What a figure is, said right after it: a state ("spent", "left", "labeled") or what it is a share of.
_STATE = re.compile(r"(?:[a-z]{2,}ed|spent|left|done|paid|open|sold|won|lost|remaining|gone|built|run)$", re.I)
_PAST = re.compile(r"\b(?:was|were|from|previously|before|formerly|originally|down from|up from)\s*[€$£~]?\s*$", re.I)
_PAST_SAID = re.compile(r"\b(?:was|were|had|from|before|earlier|previously|formerly|originally|ago|last|used to"
                        r"|since|dropped|fell|went|improved|cut|down|up|then)\b|→|->", re.I)


def _noun_after(text: str, at: int) -> str:
    """The word right after a figure (what it counts: "sourdough"), stemmed; "" when none."""
    m = re.match(r"\s?([^\W\d_][\w-]{2,})", text[at:])
    return next(iter(words_of(m[1])), "") if m else ""


def _spots(fig: Figure, text: str) -> list[tuple[int, str]]:
    """Where ``fig`` is written in ``text`` (a figure of that value), and as what."""
    out = []
    for f in figures_of(without_dates(text)):
        if _same(fig, f) and (i := text.find(f.text)) >= 0:
            out.append((i, f.text))
    return out


def _word_after(text: str, at: int, figure: str) -> str:
    """The word right after a figure that says what it is ("spent", "of signups"), "" when none does."""
    m = _WORD_AFTER.match(text, at + len(figure))
    if m is None or not (m[1] or _STATE.match(m[2])):
        return ""
    return next(iter(words_of(m[2])), "")


def swapped(fig: Figure, sentence: str, texts: list[Facts], today: date) -> str:
    """A line of the notes states ``fig`` and gives the word the reply puts after it to another of its
    figures, on every line that states it; that line, quoted ("" when none does)."""
    at = sentence.find(fig.text)
    if at < 0 or re.search(r"\b(?:of|/)\s*[€$£]?\s*$", sentence[:at]):
        return ""  # "€1,350 of €2,000 spent": the total's word is the sentence's
    role = _word_after(sentence, at, fig.text)
    if not role:
        return ""
    found = ""
    for text in texts:
        for seg in segments(text):
            if not direct(fig, seg.known):
                continue
            mine = [_word_after(seg.text, i, written) for i, written in _spots(fig, seg.text)]
            if role in mine:
                return ""
            others = [g for g in seg.figures if _alike(fig, g) and not _same(fig, g)]
            if any(_word_after(seg.text, seg.text.find(g.text), g.text) == role for g in others):
                found = found or seg.text
    return found


_OWNED = re.compile(r"(?<![\w-])([A-ZÀ-Þ][a-zà-ÿ]{2,}):? (\d[\d,.]*)(?![\d%])")


def owned(fig: Figure, sentence: str, texts: list[Facts], today: date) -> str:
    """A line of the notes that gives each figure to a name ("Hours: Luca 53, me 51, Jakob 44") gives
    ``fig`` to another name than the one the reply's clause names ("Luca … 44 hours"), quoted; "" when
    none does."""
    clause = clause_of(fig, sentence)
    for facts in texts:
        for line in facts.known.lines:
            pairs = [(m[1], float(m[2].rstrip(".,").replace(",", ""))) for m in _OWNED.finditer(line.text)]
            if len(pairs) < 2 or len({name for name, _ in pairs}) < 2:
                continue
            owners = {name for name, value in pairs if abs(value - fig.value) < 1e-9}
            named = {name for name, _ in pairs if re.search(rf"\b{re.escape(name)}\b", clause)}
            if owners and named and not owners & named:
                return line.text.strip()
    return ""


_WEEK_SAID = re.compile(r"\b(last|previous|this)\s+week(?:'s|’s)?\b", re.I)
_WEEK_LABEL = re.compile(r"(?<![\w-])(?:W|KW|CW|[Ww]eek\s?)(\d{1,2})(?!\d)")


def other_week(fig: Figure, sentence: str, texts: list[Facts], today: date) -> str:
    """The reply says ``fig`` of last week (this week), and every line of the notes that states it is
    the row of another week number, while a row of that week is there ("last week's 9.5%" where W45
    says 9.5% and W47 8.5%): that row, quoted; "" else."""
    said = _WEEK_SAID.search(clause_of(fig, sentence))
    if said is None:
        return ""
    week = (today - timedelta(days=7 if said[1].lower() in ("last", "previous") else 0)).isocalendar()[1]
    for facts in texts:
        rows = [(line, int(m[1])) for line in facts.known.lines if (m := _WEEK_LABEL.search(line.text))]
        stating = [(line, n) for line, n in rows if direct(fig, Known([line]))]
        right = [line for line, n in rows if n == week and any(b.block == line.block for b, _ in stating)]
        if stating and right and all(n != week for _, n in stating):
            return right[0].text.strip()
    return ""


def past(fig: Figure, sentence: str, texts: list[Facts], today: date) -> str:
    """Every line of the notes that states ``fig`` marks it as past ("was 1,610 ms") and the reply's
    clause says nothing of the past: that line, quoted ("" otherwise)."""
    if _PAST_SAID.search(clause_of(fig, sentence)):
        return ""
    found = ""
    for text in texts:
        for seg in segments(text):
            if not direct(fig, seg.known):
                continue
            spots = _spots(fig, seg.text)
            if not spots or not all(_PAST.search(seg.text[:i]) for i, _ in spots):
                return ""
            found = found or seg.text
    return found
