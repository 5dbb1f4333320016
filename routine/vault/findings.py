"""What the grounding check finds (``routine/vault/grounding.py``), and where it tells the model to look.

The types of a check's answer — its strictness, the kinds of unsupported claim, a finding with its
hint, a review with the notes that supported a claim the model was not shown — and the helpers the
checks of each kind share: the lookup of a note the agent may read, and the line of the notes on a
claim's topic quoted as where to look. Pure, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from enum import Enum
from typing import Callable, Iterable

from routine.vault.figures import PLAIN, figures_of, words_of
from routine.vault.grounds import Facts, Grounds
from routine.vault.mentions import dates_in, without_dates

ESTIMATE = re.compile(r"~|≈|\bestimate", re.I)  # the model's own estimate, marked as one


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


def lookup(grounds: Grounds, test: Callable[[Facts], bool], keys: set[str] | None = None,
           need: set[str] | None = None) -> str | None:
    """The first note the agent may read (not shown) whose facts pass ``test`` (``keys``, ``need``:
    what any such note has, ``Grounds.find``)."""
    return grounds.find(test, keys, need)


def sharing(words: frozenset[str], values: Iterable[float] = (), dates: Iterable[date] = ()) -> set[str]:
    """A note shares a word, a figure or a date with a claim's line (else it supports none of it)."""
    return {f"w:{w}" for w in words} | {f"v:{round(v, 6)}" for v in values} | {f"d:{d.month}-{d.day}" for d in dates}


def nearest(line: str, text: str, cls: str | None) -> tuple[str, int]:
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


def nearest_line(line: str, facts: Facts, want: str, cls: str | None = None) -> str:
    """The line of the notes on the same topic as the claim's line, quoted, as where to look."""
    if want == "figure":
        best = nearest(line, facts.text, cls)[0]
        return f"the notes say: \"{best[:140]}\"" if best else ""
    words = words_of(line)
    best, score = "", 0
    for raw in facts.text.splitlines():
        overlap = len(words_of(raw) & words) if dates_in(raw) else 0
        if overlap > score:
            best, score = raw.strip(), overlap
    return f"the notes say: \"{best[:140]}\"" if best else ""
