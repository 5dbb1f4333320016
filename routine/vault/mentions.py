"""Dates and names as a reply writes them (pure): what the grounding check compares with the notes.

Dates: 2026-12-04, 4 December 2026, Dec 4, 2026, and without a year (Dec 4, 4th December, Friday
4 Dec), with the weekday written beside them when there is one. Names: a person or a project where
the wording makes one of it — after a cue ("call", "ask", "check with", "waiting on", "owner:",
"@"), before a verb only people do ("Sarah confirmed"), a possessive ("Priya's feedback"), "project
X" or "the X pilot", and a first and last name inside a sentence ("Maria Schneider").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date
from enum import Enum

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH = r"(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?" \
         r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
_WEEKDAY = r"(?:(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)[a-z]*\.?,?\s+(?:the\s+)?)?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
ISO = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?!\d)")
_DAY_MONTH = re.compile(rf"\b{_WEEKDAY}{_DAY}(?: of)? {_MONTH}\.?(?:,? (\d{{4}}))?(?![\w-])", re.I)
_MONTH_DAY = re.compile(rf"\b{_WEEKDAY}{_MONTH}\.? {_DAY}(?:,? (\d{{4}}))?(?![\w:-])", re.I)
TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b|\b\d{1,2}\s?(?:am|pm)\b", re.I)


@dataclass(frozen=True)
class Written:
    """A date as written: its year (None when not written), month, day and weekday (None when not)."""

    text: str
    year: int | None
    month: int
    day: int
    weekday: int | None

    def on(self, year: int) -> date | None:
        try:
            return date(year, self.month, self.day)
        except ValueError:
            return None


def dates_in(text: str) -> list[Written]:
    out = [Written(m[0], int(m[1]), int(m[2]), int(m[3]), None) for m in ISO.finditer(text)]
    for m in _DAY_MONTH.finditer(text):
        out.append(Written(m[0], int(m[4]) if m[4] else None, _month(m[3]), int(m[2]), _weekday(m[1])))
    for m in _MONTH_DAY.finditer(text):
        out.append(Written(m[0], int(m[4]) if m[4] else None, _month(m[2]), int(m[3]), _weekday(m[1])))
    return [replace(w, text=w.text.rstrip(".,")) for w in out if 1 <= w.month <= 12]


def without_dates(text: str) -> str:
    """``text`` with its dates and times of day blanked (they are not figures)."""
    for pattern in (ISO, _DAY_MONTH, _MONTH_DAY, TIME):
        text = pattern.sub(lambda m: " " * len(m[0]), text)
    return text


def known_dates(text: str, today: date) -> set[date]:
    """The dates a text states; one without a year is taken in the year that puts it nearest today."""
    return dated(dates_in(text), today)


def dated(written: list[Written], today: date) -> set[date]:
    """The dates of dates as written (``known_dates``)."""
    out = set()
    for w in written:
        years = [w.year] if w.year else [today.year - 1, today.year, today.year + 1]
        found = [d for d in (w.on(y) for y in years) if d is not None]
        if found:
            out.add(min(found, key=lambda d: abs((d - today).days)))
    return out


def _month(name: str) -> int:
    return next(i for i, full in enumerate(MONTHS, 1) if full.startswith(name.lower()[:3]))


def _weekday(name: str | None) -> int | None:
    return None if not name else next(i for i, full in enumerate(WEEKDAYS) if full.startswith(name.lower()[:3]))


# --- names ----------------------------------------------------------------------------------------

class NameKind(str, Enum):
    PERSON = "person"
    PROJECT = "project"


_NAME = r"([A-ZÀ-Þ][\w'’-]+(?: [A-ZÀ-Þ][\w'’-]+)?)"
_ONE = r"([A-ZÀ-Þ][\w'’-]+)"
_MID = r"(?<=[a-z0-9,;] )"  # inside a sentence: a capital there is a name, not the sentence's start
_PERSON_CUES = [
    re.compile(r"\b(?:[Cc]all|[Pp]hone|[Aa]sk|[Ee]-?mail|[Pp]ing|[Mm]essage|[Tt]ext|[Tt]ell|[Rr]emind|[Tt]hank"
               r"|[Cc]c|[Ll]oop in|[Nn]udge|[Ii]nvite|[Cc]hase"
               r"|(?:[Mm]eet(?:ing)?|[Ss]ync|[Cc]heck|[Tt]alk|[Ss]peak|[Cc]hat|[Cc]atch up|[Ff]ollow[ -]up|[Cc]all)"
               r" (?:in )?(?:with|to)|[Ww]ait(?:ing)? (?:on|for)|[Hh]ear(?:ing)? back from|(?:[Rr]eply|[Aa]nswer|"
               r"[Ss]ign-?off|[Ff]eedback|[Aa]pproval|[Oo]k|[Gg]o-ahead) from|[Oo]wner:?|[Oo]wned by"
               r"|[Aa]ssign(?:ed)? to|[Hh]and (?:it )?(?:off|over) to|[Dd]elegate to|[Pp]er)\s+@?" + _NAME),
    re.compile(r"(?<![\w@])@" + _ONE),
    re.compile(_NAME + r" (?:said|says|confirmed|agreed|promised|mentioned|suggested|replied|emailed|called"
               r"|asked for|wants|owes|signed off|approved|is out|is on leave|will send|will confirm|will review)\b"),
    re.compile(r"([A-ZÀ-Þ][a-zà-ÿ]+ [A-ZÀ-Þ][a-zà-ÿ'’-]+) (?:from|at|of) [A-ZÀ-Þ]"),  # Sophie Martin from Northwind
]
_PROJECT_CUES = [
    re.compile(r"\b[Pp]roject:? " + _ONE),
    re.compile(_MID + _ONE + r" (?:project|pilot|launch|rollout|migration|initiative|workstream|roadmap|milestone)\b"),
]
_POSSESSIVE = re.compile(_ONE + r"(?:'s|’s) (?:feedback|review|sign-?off|answer|reply|email|call|team|input|"
                         r"approval|numbers|estimate|quote|offer|contract|deadline|launch|pilot)\b")
NOT_NAMES = frozenset({*WEEKDAYS, *MONTHS, "today", "tomorrow", "yesterday", "the", "a", "an", "me", "you", "them",
                       "it", "this", "that", "next", "last", "everyone", "someone", "anyone", "nobody", "i", "we",
                       "they", "he", "she", "our", "my", "your", "their", "his", "her", "its", "all", "each", "both",
                       "team", "legal", "finance", "support", "sales", "kr", "okr", "okrs", "q1", "q2", "q3", "q4",
                       "new", "one", "two", "three", "first", "second", "main", "key", "top", "current", "weekly",
                       "daily", "monthly", "morning", "evening", "week", "month", "year", "it's", "that's",
                       "there", "here", "then", "if", "and", "but", "or", "so", "also", "please", "maybe"})


@dataclass(frozen=True)
class Named:
    name: str
    kind: NameKind


def names_in(prose: str) -> list[Named]:
    """The people and projects a reply names, each once, in order of kind then appearance."""
    found: list[Named] = []
    for pattern in _PROJECT_CUES:
        found += [Named(_clean(m[1]), NameKind.PROJECT) for m in pattern.finditer(prose)]
    for pattern in [*_PERSON_CUES, _POSSESSIVE]:
        found += [Named(_clean(m[1]), NameKind.PERSON) for m in pattern.finditer(prose)]
    out: dict[str, Named] = {}
    for named in found:
        words = named.name.split()
        if words and words[0].lower() not in NOT_NAMES and not named.name.isupper():
            out.setdefault(named.name.lower(), named)
    return list(out.values())


_PAIR = re.compile(r"(?<![\w'’@#/\[|-])([A-ZÀ-Þ][a-zà-ÿ]+(?:-[A-ZÀ-Þ][a-zà-ÿ]+)?) ([A-ZÀ-Þ][a-zà-ÿ'’]+"
                   r"(?:-[A-ZÀ-Þ][a-zà-ÿ]+)?)(?![\w'’-]| [A-ZÀ-Þ])")


# Words that open a sentence or a task in capitals, never a first name.
_NOT_FIRST = frozenset("""ask call check send email mail ping tell remind thank see review update move book plan
    draft write read fix ship push finish start follow chase confirm share post add cut set get put let make
    take keep give run test try use for with from in on at by to of after before since until during about
    into over under per via when while where what which who why how once then next also only just still
    even maybe perhaps both either each every any some most more less many much few several no not
    yes thanks dear hi hello good great nice done open closed new old big small high low""".split())


def name_pairs(prose: str) -> list[str]:
    """Every first-and-last name a text may hold, wherever it stands ("Dana Whitfield in Legal holds the
    approval"): two capitalised words, not a heading's, neither a word the caller knows to be common
    (the caller checks that), each once."""
    out: dict[str, str] = {}
    for line in prose.splitlines():
        if line.lstrip().startswith(("#", "|")):
            continue  # a heading or a table row is titled in capitals
        for m in _PAIR.finditer(line):
            name = _clean(f"{m[1]} {m[2]}")
            if not {w.lower() for w in name.split()} & NOT_NAMES and name.split()[0].lower() not in _NOT_FIRST:
                out.setdefault(name.lower(), name)
    return list(out.values())


def _clean(name: str) -> str:
    return re.sub(r"(?:'s|’s|'|’)$", "", name.strip(" -"))
