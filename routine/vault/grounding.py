"""Is every claim of a reply grounded in what the model was given? Deterministic, no model.

A claim is supported when:

- a wikilink names a note the model was shown (a link or label in its context) or a note the
  agent may read;
- a date appears in the context (or is today, yesterday or tomorrow);
- a figure (a number of two digits or more, a percentage, an amount) appears in the context, or
  is marked as the model's own estimate ("~", "≈", "about", "estimate");
- a person or project named as one ("call Maria", "@Maria", "project Atlas") appears in the
  context or has a note in People/ or Projects/.

Strictness (the agent note's ``grounding_check``): ``strict`` checks every figure, ``lenient``
only amounts, percentages and the figures of lines about key results, objectives and targets;
links, dates and names are checked by both; ``off`` checks nothing. Times of day (09:00),
single digits and list numbers are wording, not claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import Callable

from routine.vault.files import vault_files
from routine.vault.notes import code_fence_ranges, resolve_wikilink, wikilinks
from routine.vault.scope import in_scope


class Strictness(str, Enum):
    STRICT = "strict"
    LENIENT = "lenient"
    OFF = "off"


@dataclass(frozen=True)
class Finding:
    """One claim of a reply that nothing the model was given supports."""

    kind: str   # link | date | figure | name
    claim: str
    why: str

    def line(self) -> str:
        return f"{self.claim}: {self.why}"


@dataclass(frozen=True)
class Grounds:
    """What a reply may rest on: every text the model was given, and the vault's names."""

    shown: str                          # prompt messages and tool results, joined
    today: date
    readable: Callable[[str], bool]     # a wikilink target names a note the agent may read
    names: frozenset[str]               # People/ and Projects/ note names, lowercased

    def dates(self) -> set[date]:
        return {d for d, _ in _dates(self.shown) if d is not None} | {
            self.today + timedelta(days=n) for n in (-1, 0, 1)
        }

    def figures(self) -> set[str]:
        return {value for value, *_ in _figures(self.shown)}


def grounds_for(vault_root: Path, reads: list[str], shown: list[str], today: date) -> Grounds:
    """The grounds of a reply by an agent with ``reads`` that was given the texts ``shown``."""
    names = set()
    for rel in vault_files(vault_root):
        top = rel.split("/", 1)[0]
        if top in ("People", "Projects") and rel.lower().endswith(".md"):
            names.add(PurePosixPath(rel).stem.lower())
            if top == "Projects" and rel.count("/") >= 2:
                names.add(rel.split("/")[1].lower())  # Projects/Atlas/…: the project is Atlas

    def readable(target: str) -> bool:
        rel = resolve_wikilink(vault_root, target)
        return rel is not None and in_scope(reads, rel)

    return Grounds("\n".join(shown), today, readable, frozenset(names))


def check(reply: str, grounds: Grounds, strictness: Strictness | str = Strictness.LENIENT) -> list[Finding]:
    """The unsupported claims of ``reply``, each once, in the order they appear."""
    strictness = Strictness(strictness)
    if strictness is Strictness.OFF:
        return []
    found: list[Finding] = []
    shown_links = {t.lower() for t in wikilinks(grounds.shown)}
    for target in wikilinks(reply):
        if target.lower() not in shown_links and not grounds.readable(target):
            found.append(Finding("link", f"[[{target}]]", "no such note among those you were given or may read"))
    prose = _prose(reply)
    known_dates = grounds.dates()
    for when, text in _dates(prose):
        if when is None:
            found.append(Finding("date", text, "not a date of the calendar"))
        elif when not in known_dates:
            found.append(Finding("date", text, "this date is not in the notes you were given"))
    prose = _DATE.sub(" ", _MONTH_DATE.sub(" ", _DAY_MONTH.sub(" ", prose)))
    known = grounds.figures()
    for value, text, line, at in _figures(prose):
        if value in known or _estimated(line, at) or not _claimed(text, line, strictness):
            continue
        found.append(Finding("figure", text.strip(), "this figure is not in the notes you were given "
                                                     "(mark your own estimate with ~)"))
    for name in _named(prose):
        forms = (name, name.split()[0])
        if {f.lower() for f in forms} & grounds.names or any(_said(f, grounds.shown) for f in forms):
            continue
        found.append(Finding("name", name, "no one and nothing of that name is in the notes you were given "
                                           "or in People/ or Projects/"))
    unique: dict[tuple[str, str], Finding] = {}
    for f in found:
        unique.setdefault((f.kind, f.claim), f)
    return list(unique.values())


def _said(name: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def findings_text(findings: list[Finding]) -> str:
    return "\n".join(f"- {f.line()}" for f in findings)


# --- what a reply says ----------------------------------------------------------------------

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?" \
         r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
_DATE = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d])")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}}) {_MONTH}\.? (\d{{4}})\b", re.I)
_MONTH_DATE = re.compile(rf"\b{_MONTH}\.? (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.I)
_TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b")
_LIST_NUMBER = re.compile(r"^(\s*)\d+[.)](?=\s)", re.M)
_FIGURE = re.compile(r"(?<![\w.,/-])([€$£]\s?)?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(\s?%|\s?k\b)?")
_ESTIMATE = re.compile(
    r"(~|≈|\babout|\baround|\broughly|\bapprox(?:imately|\.)?|\bestimated?|\best\.)\s*[€$£]?\s*$", re.I
)
_KR_LINE = re.compile(r"\bKR\s*\d|key result|objective|\btarget|\bcurrent\b|\bMRR\b|\bprogress\b", re.I)
_URL = re.compile(r"https?://\S+")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[\[[^\[\]\n]*\]\]")
_CUE = re.compile(r"\b(?:[Cc]all|[Ee]-?mail|[Pp]ing|[Aa]sk|[Mm]eet(?:ing)? with|[Mm]essage|[Tt]ell|[Rr]emind|[Tt]hank"
                  r"|[Tt]alk (?:to|with)|[Ss]ync with|[Cc]heck with|[Ff]ollow up with|[Ww]aiting (?:on|for)"
                  r"|[Cc]all with|[Cc]c)\s+@?([A-ZÀ-Þ][\w'-]+(?: [A-ZÀ-Þ][\w'-]+)?)")
_MENTION = re.compile(r"(?<![\w@])@([A-ZÀ-Þ][\w'-]+)")
_PROJECT = re.compile(r"\b[Pp]roject ([A-ZÀ-Þ][\w-]+)")
_NOT_NAMES = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "today", "tomorrow",
              "the", "a", "an", "me", "you", "them", "it", "this", "that", *_MONTHS}


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


def _dates(text: str) -> list[tuple[date | None, str]]:
    out: list[tuple[date | None, str]] = []
    for m in _DATE.finditer(text):
        out.append((_date(int(m[1]), int(m[2]), int(m[3])), m[0]))
    for m in _DAY_MONTH.finditer(text):
        out.append((_date(int(m[3]), _month(m[2]), int(m[1])), m[0]))
    for m in _MONTH_DATE.finditer(text):
        out.append((_date(int(m[3]), _month(m[1]), int(m[2])), m[0]))
    return out


def _month(name: str) -> int:
    return next(i for i, full in enumerate(_MONTHS, 1) if full.startswith(name.lower()[:3]))


def _date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _figures(text: str) -> list[tuple[str, str, str, int]]:
    """(canonical value, as written, its line, where in the line) for each figure of ``text``."""
    text = _LIST_NUMBER.sub(r"\1", _TIME.sub(" ", text))
    out = []
    for line in text.splitlines():
        for m in _FIGURE.finditer(line):
            whole, decimals = m[2].replace(",", ""), m[3] or ""
            value = str(int(whole)) + decimals
            out.append((value, m[0], line, m.start()))
    return out


def _claimed(text: str, line: str, strictness: Strictness) -> bool:
    """Is this figure a claim to check? Single digits never are; lenient checks amounts,
    percentages and the figures of lines about key results."""
    digits = re.sub(r"\D", "", text)
    if len(digits) < 2:
        return False
    if strictness is Strictness.STRICT:
        return True
    return bool(re.search(r"[€$£%]", text)) or bool(_KR_LINE.search(line))


def _estimated(line: str, at: int) -> bool:
    return bool(_ESTIMATE.search(line[:at])) or bool(re.search(r"\bestimate", line, re.I))


def _named(prose: str) -> list[str]:
    names = [m[1] for m in _CUE.finditer(prose)] + [m[1] for m in _MENTION.finditer(prose)]
    names += [m[1] for m in _PROJECT.finditer(prose)]
    return [n for n in dict.fromkeys(names) if n.split()[0].lower() not in _NOT_NAMES]
